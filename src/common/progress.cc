#include "common/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

namespace strata {

namespace {

std::string Count(uint64_t n) {
  if (n >= 1000000000) return fmt::format("{:.2f}G", n / 1e9);
  if (n >= 1000000) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 1000) return fmt::format("{:.1f}K", n / 1e3);
  return std::to_string(n);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), enabled_(::isatty(2) == 1) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(uint64_t done) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw(done);
}

void ProgressBar::Restart(std::string label, uint64_t total) {
  Finish();
  label_ = std::move(label);
  total_ = total;
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

void ProgressBar::Draw(uint64_t done) {
  double fraction = total_ == 0 ? 0 : std::min(1.0, static_cast<double>(done) / total_);
  int filled = static_cast<int>(fraction * 30);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar = fmt::format("\r{:<24} [{}{}] {:3.0f}% {}/{} {:.1f} s {}\x1b[K", label_,
                                std::string(filled, '#'), std::string(30 - filled, '.'),
                                fraction * 100, Count(done), Count(total_), seconds, suffix_);
  std::fputs(bar.c_str(), stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  drawn_ = false;
}

}  // namespace strata
