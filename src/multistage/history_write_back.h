// HistoryWriteBack gathers what the training steps of one PBS macro-batch compute for its
// partitions' nodes, to be written to the HistoryTable once they are all done. Its rows are laid
// out as the table's partitions are (read from the table when the macro-batch loads, so that a
// row no step recomputes keeps its value) and each node has the stamp of the step that last
// wrote it.
//
// Determinism: steps commit in training order, so the last step to compute a node's row is the
// one whose row stays, whatever the threads; the table is written only once every batch of the
// macro-batch is done (WaitTrained), at a point fixed by the macro-batch order, never by timing.
//
// Thread safety: the producer counts batches (AddBatch, Seal), the training thread commits rows
// and finishes batches, the loader waits and writes; the counters are guarded, and the rows are
// handed over by WaitTrained's lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace strata {

class HistoryWriteBack {
 public:
  // Partition i of `partitions` holds local nodes [first_local[i], first_local[i + 1]) and its
  // rows start at byte offset row_offset[i] of `rows`; `stamps` has one entry per local node
  // below first_local.back().
  HistoryWriteBack(std::vector<uint32_t> partitions, std::vector<uint64_t> first_local,
                   std::vector<uint64_t> row_offset, std::byte* rows, std::span<uint32_t> stamps,
                   uint64_t row_values);

  const std::vector<uint32_t>& partitions() const { return partitions_; }
  // The rows of partition i, as HistoryTable::WritePartition takes them, and its stamps.
  std::byte* partition_rows(size_t i) const { return rows_ + row_offset_[i]; }
  std::span<const uint32_t> partition_stamps(size_t i) const {
    return stamps_.subspan(first_local_[i], first_local_[i + 1] - first_local_[i]);
  }
  // Local nodes that have rows here: those of the partitions.
  uint64_t inner_nodes() const { return first_local_.back(); }
  uint64_t row_values() const { return row_values_; }

  // Stores `values` (float, `count` of them) at offset `first` of local node `local`'s row, as
  // float16, stamped `step`.
  void Store(uint64_t local, uint64_t first, const float* values, uint64_t count, uint32_t step);

  void AddBatch();   // a batch of the macro-batch was handed out
  void Seal();       // no more will be
  void BatchDone();  // a batch was trained (or dropped)
  // Waits until the macro-batch is sealed and every batch done (true), or until `stopping`.
  bool WaitTrained(const std::atomic<bool>& stopping);

 private:
  std::vector<uint32_t> partitions_;
  std::vector<uint64_t> first_local_;
  std::vector<uint64_t> row_offset_;
  std::byte* rows_;
  std::span<uint32_t> stamps_;
  uint64_t row_values_;

  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t handed_out_ = 0, done_ = 0;
  bool sealed_ = false;
};

}  // namespace strata
