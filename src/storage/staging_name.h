// The temporary siblings that outputs are written under before they are published (StagingDir,
// StagedFile): "<final>.strata-tmp-<pid>-XXXXXX", held under an exclusive flock by their writer
// for as long as it writes. The lock, which the kernel drops when the writer dies however it
// dies, is what lets a later run tell an abandoned sibling — its writer killed, the machine
// crashed — from one a live process is still writing, in any PID namespace, and remove only the
// first kind, so a SIGKILL leaves no litter past the next run that writes the same output.
// A sibling is created under a provisional name, "<final>.strata-new-XXXXXX", locked, and only
// then renamed to its staging name, all under a shared flock on the directory, which a run
// removing siblings holds exclusive: so it never sees a live writer's sibling unlocked, and an
// unlocked provisional sibling is one whose writer died before it could rename it.
#pragma once

#include <string>

namespace strata {

// An exclusive flock on a staging sibling, held while the object lives.
class StagingLock {
 public:
  StagingLock() = default;
  // Locks `path` (a directory or a file), waiting for no one: it was just created.
  explicit StagingLock(const std::string& path);
  ~StagingLock();
  StagingLock(StagingLock&& other) noexcept;
  StagingLock& operator=(StagingLock&& other) noexcept;

 private:
  int fd_ = -1;
};

// A staging sibling of an output, created, locked and named.
struct StagingSibling {
  std::string path;
  StagingLock lock;
};

// Creates the staging sibling of `final_path` owned by this process: a private directory
// (mkdtemp) or an empty private file (mkstemp). Throws an input error when the output's name
// leaves no room for the suffix, a system error when the sibling cannot be made.
StagingSibling CreateStagingSibling(const std::string& final_path, bool directory);

// The staging name's mkstemp/mkdtemp form for `final_path` in this process.
std::string StagingTemplate(const std::string& final_path);

// Removes the temporary siblings of `final_path` that no live writer holds (provisional ones, in
// a directory it cannot lock, once they are a minute old). Best effort: a sibling that cannot be
// removed stays, and the run goes on.
void RemoveAbandonedStaging(const std::string& final_path);

}  // namespace strata
