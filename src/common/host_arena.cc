#include "common/host_arena.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <new>

#include "common/clock.h"
#include "strata/error.h"

namespace strata {
namespace {

// A cache line: pieces never share one, and rows start aligned for the kernels that read them.
constexpr uint64_t kPieceAlignment = 64;
constexpr uint64_t kPageBytes = 4096;

uint64_t PieceBytes(uint64_t bytes) {
  return std::max<uint64_t>((bytes + kPieceAlignment - 1) / kPieceAlignment * kPieceAlignment,
                            kPieceAlignment);
}

}  // namespace

HostArena::HostArena(MemoryBudget& budget, uint64_t size_bytes, std::string what)
    : budget_(budget),
      size_bytes_(std::max<uint64_t>((size_bytes + kPageBytes - 1) / kPageBytes, 1) * kPageBytes),
      what_(std::move(what)) {
  budget_.Charge(size_bytes_, what_);
  region_ = static_cast<std::byte*>(std::aligned_alloc(kPageBytes, size_bytes_));
  if (region_ == nullptr) {
    budget_.Release(size_bytes_);
    throw std::bad_alloc();
  }
  free_.emplace(0, size_bytes_);
}

HostArena::~HostArena() {
  std::free(region_);
  budget_.Release(size_bytes_);
}

uint64_t HostArena::used_bytes() const {
  std::lock_guard lock(mutex_);
  return used_;
}

uint64_t HostArena::peak_bytes() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

std::optional<uint64_t> HostArena::TakeLocked(uint64_t bytes) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    const uint64_t offset = it->first;
    const uint64_t rest = it->second - bytes;
    free_.erase(it);
    if (rest > 0) free_.emplace(offset + bytes, rest);
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    return offset;
  }
  return std::nullopt;
}

bool HostArena::CanAllocate(uint64_t bytes) const {
  const uint64_t piece = PieceBytes(bytes);
  std::lock_guard lock(mutex_);
  return std::any_of(free_.begin(), free_.end(),
                     [&](const auto& extent) { return extent.second >= piece; });
}

std::optional<uint64_t> HostArena::Allocate(uint64_t bytes, const std::atomic<bool>& stop) {
  const uint64_t piece = PieceBytes(bytes);
  if (piece > size_bytes_) {
    throw Error::Input(
        fmt::format("a batch needs {:.1f} MiB of {}, more than all {:.1f} MiB of "
                    "it; give the loader more (pinned_memory=)",
                    piece / 1048576.0, what_, size_bytes_ / 1048576.0));
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    if (std::optional<uint64_t> offset = TakeLocked(piece)) {
      blocked_since_ns_ = 0;
      return offset;
    }
    if (stop) {
      blocked_since_ns_ = 0;
      return std::nullopt;
    }
    if (blocked_since_ns_ == 0) blocked_since_ns_ = MonotonicNs();
    freed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void HostArena::Free(uint64_t offset, uint64_t bytes) {
  const uint64_t piece = PieceBytes(bytes);
  {
    std::lock_guard lock(mutex_);
    auto next = free_.lower_bound(offset);
    uint64_t start = offset;
    uint64_t length = piece;
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        start = prev->first;
        length += prev->second;
        free_.erase(prev);
      }
    }
    if (next != free_.end() && offset + piece == next->first) {
      length += next->second;
      free_.erase(next);
    }
    free_.emplace(start, length);
    used_ -= piece;
  }
  freed_.notify_all();
}

uint64_t HostArena::blocked_ns() const {
  const uint64_t since = blocked_since_ns_;
  return since == 0 ? 0 : MonotonicNs() - since;
}

}  // namespace strata
