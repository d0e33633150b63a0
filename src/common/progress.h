// ProgressBar reports a long stage's progress on stderr. On a terminal it redraws one line,
// "label [#####.....] 45% 1.2M/2.7M 3.1 s, ETA 3.8 s", at most ten times a second. Elsewhere
// (a log file, a pipe, a job scheduler) it appends a plain line of the same counts every
// `log_interval` and, if it wrote any, one when the stage ends, so that a short stage stays
// silent and a long one shows in the log it is alive and when it will end. Calling Update in
// a hot loop costs a clock read.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace strata {

// Where and how a ProgressBar writes.
struct ProgressOutput {
  std::FILE* stream = stderr;
  bool terminal = false;
  std::chrono::milliseconds log_interval{10000};

  // stderr, as a terminal when it is one.
  static ProgressOutput Stderr();
};

class ProgressBar {
 public:
  ProgressBar(std::string label, uint64_t total, ProgressOutput output = ProgressOutput::Stderr());
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Update(uint64_t done);
  // Text drawn after the counts, e.g. "loss 0.41, 310 MB/s".
  void set_suffix(std::string suffix) { suffix_ = std::move(suffix); }
  // Ends the current stage; the next Update starts a new label and total.
  void Restart(std::string label, uint64_t total);
  void Finish();

 private:
  std::string Counts(uint64_t done) const;

  std::string label_;
  std::string suffix_;
  uint64_t total_;
  ProgressOutput output_;
  uint64_t done_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace strata
