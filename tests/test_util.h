// Helpers shared by the tests: a scratch directory removed on destruction, running the
// strata binary, and small file utilities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Runs the strata binary with `args` (no shell involved) and captures its output.
CommandResult RunStrata(const std::vector<std::string>& args);

void WriteTextFile(const std::string& path, const std::string& text);
std::vector<std::string> ListDirectory(const std::string& path);

}  // namespace strata::testing
