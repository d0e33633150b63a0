// MemoryBudget is the hard limit on the large allocations of one job (--memory-budget).
// Every buffer whose size grows with the data is charged before it is allocated; a charge
// that would exceed the limit throws an input error naming what asked for the memory, so a
// job fails at its start instead of being killed by the OS halfway through.
//
// Invariants: used() <= limit() always; peak() is the largest used() ever seen.
// Thread safety: Charge and Release may be called from any thread.
//
// The first budget a process makes sets the C library's allocator to return freed blocks of
// 1 MiB or more to the OS at once, so that the process's memory follows the charges released.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace strata {

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit_bytes);
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  void Charge(uint64_t bytes, std::string_view what);
  // Charges `bytes` if that leaves at least `keep_free` unused, else charges nothing; for
  // allocations that can wait or do without.
  bool TryCharge(uint64_t bytes, uint64_t keep_free = 0);
  void Release(uint64_t bytes);

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t available() const { return limit_ - used(); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  void NotePeak(uint64_t used);

  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
};

// TrackedCharge charges memory that another component allocates and grows by itself (a
// model's activations, which follow the largest batch seen): Update(bytes) charges the growth
// since the last update or releases the shrink. An Update that would exceed the budget throws
// the budget's error and leaves the charge as it was. Everything is released on destruction.
class TrackedCharge {
 public:
  TrackedCharge(MemoryBudget& budget, std::string what) : budget_(budget), what_(std::move(what)) {}
  ~TrackedCharge() { budget_.Release(bytes_); }
  TrackedCharge(const TrackedCharge&) = delete;
  TrackedCharge& operator=(const TrackedCharge&) = delete;

  void Update(uint64_t bytes) {
    if (bytes > bytes_) budget_.Charge(bytes - bytes_, what_);
    if (bytes < bytes_) budget_.Release(bytes_ - bytes);
    bytes_ = bytes;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  MemoryBudget& budget_;
  std::string what_;
  uint64_t bytes_ = 0;
};

// HeldCharge is a charge that travels with what it pays for (a sampled batch's blocks, from
// the sampler thread to the training step) and is released where that is dropped.
class HeldCharge {
 public:
  HeldCharge() = default;
  // Takes over `bytes` already charged to `budget`.
  HeldCharge(MemoryBudget& budget, uint64_t bytes) : budget_(&budget), bytes_(bytes) {}
  // Charges `bytes` for `what` and holds them: for memory a library allocated uncharged (a
  // vector read from a file) that lives on while later allocations fill the budget.
  static HeldCharge Take(MemoryBudget& budget, uint64_t bytes, std::string_view what) {
    budget.Charge(bytes, what);
    return HeldCharge(budget, bytes);
  }
  ~HeldCharge() { Reset(); }
  HeldCharge(HeldCharge&& other) noexcept { *this = std::move(other); }
  HeldCharge& operator=(HeldCharge&& other) noexcept {
    if (this != &other) {
      Reset();
      budget_ = std::exchange(other.budget_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  void Reset() {
    if (budget_ != nullptr) budget_->Release(bytes_);
    budget_ = nullptr;
    bytes_ = 0;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  MemoryBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

// ChargedArray<T> is a heap array of trivially constructible T whose bytes are charged to a
// MemoryBudget for as long as it lives. The elements are left uninitialised: filling them is
// the first touch, and callers fill only what they use.
template <typename T>
class ChargedArray {
 public:
  ChargedArray() = default;
  ChargedArray(MemoryBudget& budget, size_t count, std::string_view what)
      : budget_(&budget), count_(count) {
    budget.Charge(count * sizeof(T), what);
    data_.reset(new T[count]);
  }
  // An array of `count` whose bytes the caller has charged to `budget` already.
  static ChargedArray Adopt(MemoryBudget& budget, size_t count) {
    ChargedArray array;
    array.budget_ = &budget;
    array.count_ = count;
    array.data_.reset(new T[count]);
    return array;
  }
  ~ChargedArray() { Reset(); }
  ChargedArray(ChargedArray&& other) noexcept { *this = std::move(other); }
  ChargedArray& operator=(ChargedArray&& other) noexcept {
    if (this != &other) {
      Reset();
      budget_ = other.budget_;
      count_ = other.count_;
      data_ = std::move(other.data_);
      other.budget_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return count_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

  void Reset() {
    if (budget_ != nullptr) budget_->Release(count_ * sizeof(T));
    data_.reset();
    budget_ = nullptr;
    count_ = 0;
  }

 private:
  MemoryBudget* budget_ = nullptr;
  size_t count_ = 0;
  std::unique_ptr<T[]> data_;
};

// Parses "512M", "4G", "1.5G", "65536" (bytes; K/M/G/T are powers of 1024). Throws an input
// error naming `option` on anything else.
uint64_t ParseByteSize(std::string_view text, std::string_view option);

// --memory-budget's text (ParseByteSize's forms); empty means a quarter of physical memory.
uint64_t MemoryBudgetFromOption(std::string_view text);

// "1.5 GiB", "512 MiB", "12 KiB", "17 B".
std::string FormatBytes(uint64_t bytes);
// FormatBytes of the smallest value at its printed precision that is >= bytes, so that the
// text, given back as a budget ("2.2M" reads back as 2.2 MiB), is never too small.
std::string FormatBytesRoundedUp(uint64_t bytes);

uint64_t PhysicalMemoryBytes();

// Peak resident set size of this process (VmHWM).
uint64_t PeakRssBytes();

}  // namespace strata
