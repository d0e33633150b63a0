// Helpers shared by the tests: a scratch directory removed on destruction, running the
// strata binary (or any program), and small file utilities.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/dataset.h"
#include "strata/generate.h"
#include "strata/memory_budget.h"

namespace strata::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when destroyed.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_status = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// What RunCommand sets up in the child before it execs the program.
struct RunLimits {
  // Nonzero: caps every file the program writes (RLIMIT_FSIZE, with SIGXFSZ ignored so that a
  // write past it fails with EFBIG), a guard for inputs that would make a broken program fill
  // the disk.
  uint64_t max_file_bytes = 0;
  // >= 0: runs the program as that user, with that group and no supplementary groups (needs
  // root); exit status 126 if the switch fails.
  int run_as_uid = -1;
  // > 0: SIGKILLs the program this many seconds after it starts unless it has exited (the kill
  // tests' crash at a random moment).
  double kill_after_s = 0;
};

// Runs argv[0] (searched in PATH unless it holds a '/') with argv, no shell involved unless
// argv says so, and captures its output; exit status 127 if it cannot be run.
CommandResult RunCommand(const std::vector<std::string>& argv, const RunLimits& limits = {});

// RunCommand for the strata binary with `args`.
CommandResult RunStrata(const std::vector<std::string>& args);

// Options for a small generated SBM dataset at `out` (64 MiB budget); tests adjust the rest.
GenerateOptions SmallGraph(const std::string& out, uint64_t nodes, uint64_t feature_dim,
                           uint32_t classes, double avg_degree = 6, uint64_t seed = 0);

// Empty when an io_uring IoEngine can be set up here; otherwise why not, for GTEST_SKIP.
std::string UringUnavailableReason();

void WriteTextFile(const std::string& path, const std::string& text);
std::vector<std::string> ListDirectory(const std::string& path);

// `values` in an array charged to `budget` (graphs and partitionings built by hand).
template <typename T>
ChargedArray<T> ChargedArrayOf(MemoryBudget& budget, const std::vector<T>& values) {
  ChargedArray<T> array(budget, values.size(), "test arrays");
  std::copy(values.begin(), values.end(), array.data());
  return array;
}

// Dataset::Verify (checksums and contents) with room for any test dataset.
inline void VerifyDataset(const Dataset& dataset) {
  MemoryBudget budget(uint64_t{1} << 30);
  dataset.Verify(budget);
}

}  // namespace strata::testing
