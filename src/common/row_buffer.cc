#include "strata/row_buffer.h"

#include <utility>

#include "common/host_arena.h"

namespace strata {

RowBuffer::RowBuffer(ChargedArray<float> owned)
    : owned_(std::move(owned)), data_(owned_.data()), count_(owned_.size()) {}

RowBuffer::~RowBuffer() { Reset(); }

RowBuffer::RowBuffer(RowBuffer&& other) noexcept { *this = std::move(other); }

RowBuffer& RowBuffer::operator=(RowBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    owned_ = std::move(other.owned_);
    arena_ = std::exchange(other.arena_, nullptr);
    offset_ = std::exchange(other.offset_, 0);
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

void RowBuffer::Reset() {
  if (arena_ != nullptr) arena_->Free(offset_, count_ * sizeof(float));
  owned_.Reset();
  arena_ = nullptr;
  offset_ = 0;
  data_ = nullptr;
  count_ = 0;
}

std::optional<RowBuffer> RowBuffer::Allocate(MemoryBudget& budget, HostArena* arena, size_t count,
                                             const std::atomic<bool>& stop) {
  if (arena == nullptr)
    return RowBuffer(ChargedArray<float>(budget, count, "batch input features"));
  const std::optional<uint64_t> offset = arena->Allocate(count * sizeof(float), stop);
  if (!offset) return std::nullopt;
  RowBuffer rows;
  rows.arena_ = arena;
  rows.offset_ = *offset;
  rows.data_ = reinterpret_cast<float*>(arena->base() + *offset);
  rows.count_ = count;
  return rows;
}

bool RowBuffer::Fits(const MemoryBudget& budget, HostArena* arena, size_t count) {
  const uint64_t bytes = count * sizeof(float);
  return arena == nullptr ? budget.available() >= bytes : arena->CanAllocate(bytes);
}

}  // namespace strata
