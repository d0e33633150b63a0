#include "storage/staged_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "storage/staging_name.h"
#include "strata/error.h"

namespace strata {

void CheckReplaceableOutput(const std::string& path) {
  // The rename would put a regular file in place of a device, a pipe or a link (as root,
  // /dev/null itself), or fail late on a directory.
  struct stat existing;
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    throw Error::Input(
        "output exists and is not a regular file (a directory, device, pipe, socket or symbolic "
        "link); not replacing it",
        path);
  }
}

StagedFile::StagedFile(std::string final_path) : final_path_(std::move(final_path)) {
  CheckReplaceableOutput(final_path_);
  RemoveAbandonedStaging(final_path_);
  StagingSibling sibling = CreateStagingSibling(final_path_, /*directory=*/false);
  staging_path_ = std::move(sibling.path);
  lock_ = std::move(sibling.lock);
  // mkstemp creates the file private (0600); the output gets the usual umask mode.
  ::chmod(staging_path_.c_str(), 0666 & ~CurrentUmask());
  writer_ = std::make_unique<FileWriter>(staging_path_);
}

StagedFile::~StagedFile() {
  writer_.reset();
  if (!published_) ::unlink(staging_path_.c_str());
}

FileDigest StagedFile::Publish() {
  FileDigest digest = writer_->Finish();
  if (::rename(staging_path_.c_str(), final_path_.c_str()) != 0) {
    throw Error::System("cannot move the finished file into place", final_path_, errno);
  }
  published_ = true;
  SyncDirectory(ParentDirectory(final_path_));
  return digest;
}

}  // namespace strata
