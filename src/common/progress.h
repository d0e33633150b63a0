// ProgressBar draws "label [#####.....] 45% 1.2M/2.7M 3.1 s" on stderr when stderr is a
// terminal and stays silent otherwise (pipes, CI, tests). Redraws at most ten times a second,
// so calling Update in a hot loop costs a clock read.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace strata {

class ProgressBar {
 public:
  ProgressBar(std::string label, uint64_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Update(uint64_t done);
  // Text drawn after the counts, e.g. "loss 0.41, 310 MB/s".
  void set_suffix(std::string suffix) { suffix_ = std::move(suffix); }
  // Replaces the bar's line; the next Update starts a new label and total.
  void Restart(std::string label, uint64_t total);
  void Finish();

 private:
  void Draw(uint64_t done);

  std::string label_;
  std::string suffix_;
  uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace strata
