// RowBuffer holds the feature rows of one batch: either its own array, charged to the
// budget while it lives, or a piece of a HostArena (the loader's pinned output region),
// returned to the arena when the buffer is destroyed. Consumers see the same thing either
// way: data() and size() floats, row-major.
//
// Invariants: a moved-from or default RowBuffer is empty (data() null, size() 0); an arena
// piece is freed exactly once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "strata/memory_budget.h"

namespace strata {

class HostArena;  // src/common/host_arena.h

class RowBuffer {
 public:
  RowBuffer() = default;
  explicit RowBuffer(ChargedArray<float> owned);
  ~RowBuffer();
  RowBuffer(RowBuffer&& other) noexcept;
  RowBuffer& operator=(RowBuffer&& other) noexcept;

  // `count` floats for a batch: from `arena` when one is given, waiting for room (nullopt when
  // `stop` is set meanwhile), else a fresh array charged to `budget` (which throws when it does
  // not fit).
  static std::optional<RowBuffer> Allocate(MemoryBudget& budget, HostArena* arena, size_t count,
                                           const std::atomic<bool>& stop);
  // Whether Allocate would succeed now without waiting or exceeding the budget.
  static bool Fits(const MemoryBudget& budget, HostArena* arena, size_t count);

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return count_; }
  // Whether the rows lie in an arena (the loader's pinned region).
  bool in_arena() const { return arena_ != nullptr; }

 private:
  void Reset();

  ChargedArray<float> owned_;
  HostArena* arena_ = nullptr;
  uint64_t offset_ = 0;
  float* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace strata
