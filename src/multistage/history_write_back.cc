#include "multistage/history_write_back.h"

#include <algorithm>
#include <chrono>

#include "common/float16.h"

namespace strata {

HistoryWriteBack::HistoryWriteBack(std::vector<uint32_t> partitions,
                                   std::vector<uint64_t> first_local,
                                   std::vector<uint64_t> row_offset, std::byte* rows,
                                   std::span<uint32_t> stamps, uint64_t row_values)
    : partitions_(std::move(partitions)),
      first_local_(std::move(first_local)),
      row_offset_(std::move(row_offset)),
      rows_(rows),
      stamps_(stamps),
      row_values_(row_values) {}

void HistoryWriteBack::Store(uint64_t local, uint64_t first, const float* values, uint64_t count,
                             uint32_t step) {
  const size_t i = static_cast<size_t>(
      std::upper_bound(first_local_.begin(), first_local_.end(), local) - first_local_.begin() - 1);
  auto* row =
      reinterpret_cast<uint16_t*>(rows_ + row_offset_[i]) + (local - first_local_[i]) * row_values_;
  FloatsToHalves({values, count}, row + first);
  stamps_[local] = step;
}

void HistoryWriteBack::AddBatch() {
  std::lock_guard lock(mutex_);
  ++handed_out_;
}

void HistoryWriteBack::Seal() {
  std::lock_guard lock(mutex_);
  sealed_ = true;
  changed_.notify_all();
}

void HistoryWriteBack::BatchDone() {
  std::lock_guard lock(mutex_);
  ++done_;
  changed_.notify_all();
}

bool HistoryWriteBack::WaitTrained(const std::atomic<bool>& stopping) {
  std::unique_lock lock(mutex_);
  while (!(sealed_ && done_ == handed_out_)) {
    if (stopping) return false;
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace strata
