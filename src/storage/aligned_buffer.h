// AlignedBuffer is a heap allocation whose address and size are multiples of
// kDirectIoAlignment, as O_DIRECT reads need, charged to a MemoryBudget for as long as it
// lives. The bytes are left uninitialised: the reads that fill it are their first touch.
//
// Invariants: data() is kDirectIoAlignment-aligned (nullptr when empty); size() is a multiple
// of kDirectIoAlignment; exactly size() bytes are charged to the budget while data() is set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `bytes` rounded up to a multiple of kDirectIoAlignment. Throws the budget's input
  // error, naming `what`, when the charge does not fit.
  AlignedBuffer(MemoryBudget& budget, size_t bytes, std::string_view what);
  ~AlignedBuffer() { Reset(); }
  AlignedBuffer(AlignedBuffer&& other) noexcept { *this = static_cast<AlignedBuffer&&>(other); }
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<std::byte> span() { return {data_, size_}; }
  std::span<const std::byte> span() const { return {data_, size_}; }

  // Frees the memory and releases the charge.
  void Reset();

 private:
  MemoryBudget* budget_ = nullptr;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace strata
