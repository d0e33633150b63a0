#include "storage/aligned_buffer.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "strata/error.h"

namespace strata {

AlignedBuffer::AlignedBuffer(MemoryBudget& budget, size_t bytes, std::string_view what) {
  if (bytes == 0) return;
  size_t rounded = (bytes + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
  budget.Charge(rounded, what);
  void* memory = nullptr;
  if (::posix_memalign(&memory, kDirectIoAlignment, rounded) != 0) {
    budget.Release(rounded);
    throw Error::Internal("cannot allocate " + FormatBytes(rounded) + " for " + std::string(what));
  }
  budget_ = &budget;
  data_ = static_cast<std::byte*>(memory);
  size_ = rounded;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = std::exchange(other.budget_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void AlignedBuffer::Reset() {
  if (data_ == nullptr) return;
  std::free(data_);
  budget_->Release(size_);
  budget_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace strata
