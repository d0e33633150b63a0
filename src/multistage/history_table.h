// HistoryTable holds partition-based sampling's historical embeddings (GNNAutoScale; Joestar's
// PBS, T. Huang, "Efficient Systems for Large-Scale Graph Representation Learning", MIT PhD
// thesis, 2025, §5.2.2): for every node of a partitioned dataset, the inputs of the model's
// hidden layers as last computed (row_values float16 values: the hidden layers' rows side by
// side), on disk in a scratch file, and in memory the step that last wrote each row.
//
// Partition p's rows are one contiguous range of the file starting on a direct-I/O boundary,
// so a macro-batch reads and writes back its partitions' rows with large sequential transfers
// that touch no other partition's bytes; halo nodes' rows are gathered with small direct reads
// (the 4 KiB units holding them, neighbours merged) through an IoEngine. The file is reserved
// whole when the table is made, so a disk too small is refused before the first epoch. Rows
// start as zeros, stamped kNeverWritten.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "storage/aligned_buffer.h"
#include "storage/scratch_file.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

class HistoryTable {
 public:
  static constexpr uint32_t kNeverWritten = UINT32_MAX;

  // `offsets`: partition p's nodes are [offsets[p], offsets[p + 1]). The stamps (4 bytes a
  // node) and a staging buffer for gathers are charged to `budget`.
  HistoryTable(std::vector<uint64_t> offsets, uint64_t row_values, const std::string& scratch_dir,
               uint32_t io_depth, MemoryBudget& budget);
  ~HistoryTable();
  HistoryTable(const HistoryTable&) = delete;
  HistoryTable& operator=(const HistoryTable&) = delete;

  // The file's bytes for these partitions and rows.
  static uint64_t FileBytes(std::span<const uint64_t> offsets, uint64_t row_values);
  // What a table of `nodes` rows charges to the budget: its read staging and its stamps.
  static uint64_t ChargedBytes(uint64_t nodes, uint64_t row_values) {
    return StagingBytes(row_values) + nodes * sizeof(uint32_t);
  }

  uint64_t row_values() const { return row_values_; }
  uint64_t row_bytes() const { return row_values_ * sizeof(uint16_t); }
  // Bytes of a buffer for partition p's rows (direct-I/O aligned).
  uint64_t PartitionBytes(uint32_t p) const { return base_[p + 1] - base_[p]; }

  // Partition p's rows, in node order, into `rows` (PartitionBytes(p), aligned).
  void ReadPartition(uint32_t p, std::byte* rows);
  // Writes partition p's rows from `rows` (as ReadPartition lays them out) and its nodes'
  // stamps (one per node).
  void WritePartition(uint32_t p, std::byte* rows, std::span<const uint32_t> stamps);
  // The stamps of partition p's nodes.
  std::span<const uint32_t> PartitionStamps(uint32_t p) const {
    return {stamps_.data() + offsets_[p], offsets_[p + 1] - offsets_[p]};
  }
  // The rows of `nodes` (ascending) into `rows` (nodes.size() x row_values) and their stamps.
  void Gather(std::span<const uint64_t> nodes, std::span<uint16_t> rows,
              std::span<uint32_t> stamps);

  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  uint32_t PartitionOf(uint64_t node) const;
  uint64_t FileOffset(uint64_t node) const;

  std::vector<uint64_t> offsets_;
  uint64_t row_values_;
  std::vector<uint64_t> base_;  // partition p's rows start at base_[p]; base_[parts] the end
  ScratchFile file_;
  static uint64_t StagingBytes(uint64_t row_values);

  std::unique_ptr<IoEngine> engine_;
  int engine_file_ = 0;
  AlignedBuffer staging_;
  ChargedArray<uint32_t> stamps_;
  uint64_t bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace strata
