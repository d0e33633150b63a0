#include "storage/staging_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "storage/file.h"
#include "storage/staging_name.h"
#include "strata/error.h"

namespace strata {
namespace fs = std::filesystem;

StagingDir::StagingDir(std::string final_path, bool replace_existing)
    : final_path_(std::move(final_path)), replace_existing_(replace_existing) {
  while (final_path_.size() > 1 && final_path_.back() == '/') final_path_.pop_back();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(final_path_, ec)) && !replace_existing_) {
    throw Error::Input("output already exists; pass --force to replace it", final_path_);
  }
  std::string parent = ParentDirectory(final_path_);
  if (!fs::is_directory(parent, ec)) {
    throw Error::Input("parent directory of the output does not exist", final_path_);
  }
  RemoveAbandonedStaging(final_path_);
  StagingSibling sibling = CreateStagingSibling(final_path_, /*directory=*/true);
  staging_path_ = std::move(sibling.path);
  lock_ = std::move(sibling.lock);
  // mkdtemp creates the directory private (0700); the dataset gets the usual umask mode.
  ::chmod(staging_path_.c_str(), 0777 & ~CurrentUmask());
}

StagingDir::~StagingDir() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(staging_path_, ec);
}

std::string StagingDir::MakeSubdir(const std::string& name) const {
  std::string path = staging_path_ + "/" + name;
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error::System("cannot create directory", path, errno);
  }
  return path;
}

void StagingDir::Publish() {
  // Every directory's entries, not only the top one's: graph/, split/ and the others hold most
  // of the files.
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(staging_path_)) {
    if (entry.is_directory()) SyncDirectory(entry.path().string());
  }
  SyncDirectory(staging_path_);
  std::error_code ec;
  bool exists = fs::exists(fs::symlink_status(final_path_, ec));
  if (!exists) {
    if (::rename(staging_path_.c_str(), final_path_.c_str()) != 0) {
      throw Error::System("cannot move the finished output into place", final_path_, errno);
    }
  } else {
    if (!replace_existing_) {
      throw Error::Input("output appeared while it was being written; not replacing it",
                         final_path_);
    }
    // Exchanging keeps a complete dataset at the final path at every instant; the old content
    // then sits at the staging path and is removed with it.
    if (::renameat2(AT_FDCWD, staging_path_.c_str(), AT_FDCWD, final_path_.c_str(),
                    RENAME_EXCHANGE) != 0) {
      throw Error::System("cannot replace the existing output", final_path_, errno);
    }
    fs::remove_all(staging_path_, ec);
  }
  published_ = true;
  SyncDirectory(ParentDirectory(final_path_));
}

}  // namespace strata
