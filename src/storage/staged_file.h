// StagedFile writes one file under a temporary sibling name and renames it over the final
// path only in Publish(), so readers see either the old file or the complete new one, and a
// crash (or power cut: the file and then its directory are fsynced) leaves one of the two.
// Not published, the destructor removes the temporary file. It replaces only a regular file:
// an existing final path of any other kind is refused when the StagedFile is made.
#pragma once

#include <memory>
#include <string>

#include "storage/file.h"
#include "storage/staging_name.h"

namespace strata {

// Throws Error::Input when `path` exists and is not a regular file: the output StagedFile
// refuses to replace. A run that writes an output only later checks it before it starts.
void CheckReplaceableOutput(const std::string& path);

class StagedFile {
 public:
  explicit StagedFile(std::string final_path);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  FileWriter& writer() { return *writer_; }
  // Finishes the writer (flush, fsync), renames the file into place and syncs the directory.
  FileDigest Publish();

 private:
  std::string final_path_;
  std::string staging_path_;
  StagingLock lock_;  // held while this writes, so no other run takes the sibling for abandoned
  std::unique_ptr<FileWriter> writer_;
  bool published_ = false;
};

}  // namespace strata
