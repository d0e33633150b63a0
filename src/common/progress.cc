#include "common/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace strata {

namespace {

std::string Count(uint64_t n) {
  if (n >= 1000000000) return fmt::format("{:.2f}G", n / 1e9);
  if (n >= 1000000) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 1000) return fmt::format("{:.1f}K", n / 1e3);
  return std::to_string(n);
}

std::string Duration(double seconds) {
  if (seconds < 100) return fmt::format("{:.1f} s", seconds);
  if (seconds < 6000) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

ProgressOutput ProgressOutput::Stderr() {
  ProgressOutput output;
  output.terminal = ::isatty(2) == 1;
  return output;
}

ProgressBar::ProgressBar(std::string label, uint64_t total, ProgressOutput output)
    : label_(std::move(label)), total_(total), output_(output) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(uint64_t done) {
  done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ <
      (output_.terminal ? std::chrono::milliseconds(100) : output_.log_interval)) {
    return;
  }
  last_draw_ = now;
  if (output_.terminal) {
    const double fraction = total_ == 0 ? 0 : std::min(1.0, static_cast<double>(done) / total_);
    const int filled = static_cast<int>(fraction * 30);
    fmt::print(output_.stream, "\r{:<24} [{}{}] {}\x1b[K", label_, std::string(filled, '#'),
               std::string(30 - filled, '.'), Counts(done));
  } else {
    fmt::print(output_.stream, "{}: {}\n", label_, Counts(done));
  }
  std::fflush(output_.stream);
  drawn_ = true;
}

std::string ProgressBar::Counts(uint64_t done) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string counts;
  if (total_ == 0) {
    counts = fmt::format("{} in {}", Count(done), Duration(seconds));
  } else {
    const double fraction = std::min(1.0, static_cast<double>(done) / total_);
    counts = fmt::format("{:3.0f}% {}/{} in {}", fraction * 100, Count(done), Count(total_),
                         Duration(seconds));
    if (done > 0 && done < total_) {
      counts += ", ETA " + Duration(seconds * (total_ - done) / done);
    }
  }
  return suffix_.empty() ? counts : counts + ", " + suffix_;
}

void ProgressBar::Restart(std::string label, uint64_t total) {
  Finish();
  label_ = std::move(label);
  total_ = total;
  done_ = 0;
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

void ProgressBar::Finish() {
  if (!drawn_) return;
  if (output_.terminal) {
    std::fputs("\r\x1b[K", output_.stream);
  } else {
    fmt::print(output_.stream, "{}: done, {}\n", label_, Counts(done_));
  }
  std::fflush(output_.stream);
  drawn_ = false;
}

}  // namespace strata
