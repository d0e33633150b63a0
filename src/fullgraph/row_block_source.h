// RowBlockSource hands a row-ordered file to a computation one RoBW block at a time, in row
// order, the same way whether the file is resident or streamed:
//
// - ResidentRows reads the whole file once into memory (charged); every pass is one block.
// - StreamedRows keeps two buffers and streams the plan's blocks each pass with large direct
//   reads (4 MiB, through the IoEngine), block k + 1's reads in flight while the caller works
//   on block k (AIRES's phase II: the next segment loads while the current one multiplies).
//
// A pass calls fn(block, row) with row(r) the address of row r's first byte for every r in
// the block; the bytes stay valid until fn returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fullgraph/row_blocks.h"
#include "storage/aligned_buffer.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

// The address of row r's first byte inside the current block.
using RowAddress = std::function<const std::byte*(uint64_t row)>;

struct RowStreamStats {
  uint64_t bytes_read = 0;
  uint64_t reads = 0;
  double wait_s = 0;  // the caller waiting for a block's reads
};

class RowBlockSource {
 public:
  virtual ~RowBlockSource() = default;
  virtual void ForEachBlock(const std::function<void(const RowBlock&, const RowAddress&)>& fn) = 0;
  virtual const std::vector<RowBlock>& blocks() const = 0;
  virtual RowStreamStats stats() const = 0;
};

class ResidentRows final : public RowBlockSource {
 public:
  // Reads bytes [0, offset_of(rows)) of `path`.
  ResidentRows(const std::string& path, uint64_t rows, RowOffset offset_of, MemoryBudget& budget,
               std::string_view what);
  void ForEachBlock(const std::function<void(const RowBlock&, const RowAddress&)>& fn) override;
  const std::vector<RowBlock>& blocks() const override { return blocks_; }
  RowStreamStats stats() const override { return {}; }

 private:
  RowOffset offset_of_;
  std::vector<RowBlock> blocks_;
  AlignedBuffer bytes_;
};

class StreamedRows final : public RowBlockSource {
 public:
  // Two buffers of `buffer_bytes` (charged) and the blocks PlanRowBlocks cuts for them.
  StreamedRows(const std::string& path, uint64_t rows, uint64_t group, RowOffset offset_of,
               uint64_t buffer_bytes, uint32_t io_depth, MemoryBudget& budget,
               std::string_view what);
  ~StreamedRows() override;
  void ForEachBlock(const std::function<void(const RowBlock&, const RowAddress&)>& fn) override;
  const std::vector<RowBlock>& blocks() const override { return blocks_; }
  RowStreamStats stats() const override { return stats_; }

 private:
  // Queues the reads of block k into buffer k % 2; returns how many.
  size_t Submit(size_t k);
  void Wait(size_t reads);

  RowOffset offset_of_;
  std::vector<RowBlock> blocks_;
  uint64_t buffer_bytes_;
  AlignedBuffer buffers_;  // two halves
  std::unique_ptr<IoEngine> engine_;
  int file_ = -1;
  RowStreamStats stats_;
};

}  // namespace strata
