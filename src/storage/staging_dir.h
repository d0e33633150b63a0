// StagingDir is where a dataset is written before it exists: a temporary sibling of the final
// path, renamed into place by Publish() only when complete. Until then the final path is
// untouched, and the destructor removes the staging directory with everything in it, so a
// failed, refused or interrupted job leaves nothing behind.
//
// Invariant: after Publish() the final path holds the complete new content (an old one it
// replaced has been removed) and the staging path no longer exists.
#pragma once

#include <string>

#include "storage/staging_name.h"

namespace strata {

class StagingDir {
 public:
  // Refuses (input error) when `final_path` exists and `replace_existing` is false, or when its
  // parent directory does not exist; removes abandoned staging siblings (staging_name.h) and
  // creates "<final>.strata-tmp-<pid>-XXXXXX" beside it.
  StagingDir(std::string final_path, bool replace_existing);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::string& path() const { return staging_path_; }
  std::string operator/(const std::string& name) const { return staging_path_ + "/" + name; }

  // Creates a subdirectory of the staging directory and returns its path.
  std::string MakeSubdir(const std::string& name) const;

  // Atomically moves the staging directory to the final path (exchanging it with an existing
  // one when replacing, then removing the old content) and syncs the parent directory.
  void Publish();

 private:
  std::string final_path_;
  std::string staging_path_;
  StagingLock lock_;  // held while this writes, so no other run takes the sibling for abandoned
  bool replace_existing_;
  bool published_ = false;
};

}  // namespace strata
