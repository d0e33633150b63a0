// RowBlockSource hands row-ordered files to a computation one RoBW block at a time, in row
// order, the same way whether they are resident or streamed. Several files may share one row
// structure (a CSR matrix's column ids and values: row r starts at the same offset_of(r) in
// both), and then travel together, block by block.
//
// - ResidentRows reads the whole files once into memory (charged); every pass is one block.
// - StreamedRows keeps two buffers per file and streams the plan's blocks each pass with large
//   direct reads (4 MiB, through the IoEngine), block k + 1's reads in flight while the caller
//   works on block k (AIRES's phase II: the next segment loads while the current one
//   multiplies), and while it works on the last block the next pass's first. As the MaxMemory
//   baseline of AIRES §V it instead keeps a prefix of the rows resident, up to a fixed share of
//   the budget, and reads the rest one block at a time into one buffer, the multiplication
//   waiting for each read.
//
// A pass calls fn(block, row) with row(f, r) the address of row r's first byte in file f for
// every r in the block; the bytes stay valid until fn returns. A RowBlockPass walks the same
// blocks pulled one at a time instead, for a computation that walks two sources side by side
// (the full graph's backward input product beside its last propagation: the features' row
// groups beside the adjacency's rows); a block's bytes stay valid until the next pull. A failed
// read (EIO, a file truncated since it was opened) ends the pass with the engine's strata::Error,
// which names the file and offset, once every read still in flight has landed: no read writes into
// a buffer after ForEachBlock throws, and the next pass starts clean. After a pass that returns,
// only the next pass's first block may be in flight, into the stream's own buffers (a failed read
// of it ends that pass; the destructor waits for it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fullgraph/row_blocks.h"
#include "storage/aligned_buffer.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

// The address of row r's first byte of file f inside the current block.
using RowAddress = std::function<const std::byte*(size_t file, uint64_t row)>;

struct RowStreamStats {
  uint64_t bytes_read = 0;
  uint64_t reads = 0;
  double wait_s = 0;  // the caller waiting for a block's reads
};

class RowBlockSource {
 public:
  virtual ~RowBlockSource() = default;
  // One pass, fn called on every block in order.
  void ForEachBlock(const std::function<void(const RowBlock&, const RowAddress&)>& fn);
  virtual const std::vector<RowBlock>& blocks() const = 0;
  virtual RowStreamStats stats() const = 0;

 private:
  friend class RowBlockPass;
  // A pass, as RowBlockPass drives it: begun, blocks pulled in order (false after the last),
  // and ended, `unwinding` when an exception ends it. A pass that ends before its last block
  // was pulled, or by an exception, is abandoned.
  virtual void BeginPass() = 0;
  virtual bool NextBlock(RowBlock& block, RowAddress& row) = 0;
  virtual void EndPass(bool unwinding) noexcept = 0;
};

// One pass over a source, its blocks pulled in row order. At most one pass per source is open
// at a time. Destroyed while an exception unwinds, or before every block was pulled, it
// abandons the pass: no read is left in flight, and the next pass starts clean.
class RowBlockPass {
 public:
  explicit RowBlockPass(RowBlockSource& source);
  ~RowBlockPass();
  RowBlockPass(const RowBlockPass&) = delete;
  RowBlockPass& operator=(const RowBlockPass&) = delete;

  // The next block and its rows' addresses (valid until the next call); false after the last.
  bool Next(RowBlock& block, RowAddress& row);

 private:
  RowBlockSource& source_;
  int exceptions_;  // in flight when the pass began
};

class ResidentRows final : public RowBlockSource {
 public:
  // Reads bytes [0, offset_of(rows)) of each of `paths`.
  ResidentRows(const std::vector<std::string>& paths, uint64_t rows, RowOffset offset_of,
               MemoryBudget& budget, std::string_view what);
  const std::vector<RowBlock>& blocks() const override { return blocks_; }
  RowStreamStats stats() const override { return {}; }

 private:
  void BeginPass() override { handed_ = false; }
  bool NextBlock(RowBlock& block, RowAddress& row) override;
  void EndPass(bool) noexcept override {}

  bool handed_ = false;  // this pass's one block
  RowOffset offset_of_;
  std::vector<RowBlock> blocks_;
  std::vector<AlignedBuffer> bytes_;  // by file
};

class StreamedRows final : public RowBlockSource {
 public:
  // Two buffers of `buffer_bytes` per file (charged) and the blocks PlanRowBlocks cuts for
  // one, read through an engine made with `io` (its depth at least 1; tests set a fault
  // hook). With `resident_bytes` > 0 and `overlap` false (MaxMemory): the first groups of rows
  // whose span fits resident_bytes are read once and kept, and one buffer per file serves the
  // rest, block by block, without read-ahead.
  StreamedRows(const std::vector<std::string>& paths, uint64_t rows, uint64_t group,
               RowOffset offset_of, uint64_t buffer_bytes, IoEngineOptions io, MemoryBudget& budget,
               std::string_view what, uint64_t resident_bytes = 0, bool overlap = true);
  ~StreamedRows() override;
  const std::vector<RowBlock>& blocks() const override { return blocks_; }
  RowStreamStats stats() const override { return stats_; }

 private:
  void BeginPass() override { next_ = 0; }
  bool NextBlock(RowBlock& block, RowAddress& row) override;
  void EndPass(bool unwinding) noexcept override;

  // Reads in flight, counted in stats() once waited for (a read-ahead belongs to the pass
  // that uses it).
  struct Pending {
    size_t reads = 0;
    uint64_t bytes = 0;
  };
  // Queues the reads of block k of every file into its buffers `slot` (0 or 1; without
  // overlap the one buffer).
  Pending Submit(size_t k, size_t slot);
  void Wait(const Pending& pending);
  std::byte* Buffer(size_t file, size_t slot) {
    return buffers_.data() + (overlap_ ? 2 * file + slot : file) * buffer_bytes_;
  }

  RowOffset offset_of_;
  bool overlap_;
  std::vector<RowBlock> blocks_;  // the resident prefix first, when there is one
  uint64_t resident_rows_ = 0;
  std::vector<AlignedBuffer> prefix_;  // by file: the resident prefix's bytes
  uint64_t buffer_bytes_;
  AlignedBuffer buffers_;  // two per file
  std::unique_ptr<IoEngine> engine_;
  std::vector<int> files_;
  size_t slot_ = 0;                 // the buffers of the block read last
  size_t next_ = 0;                 // the pass's next block
  std::optional<Pending> pending_;  // its reads, once submitted, into slot_
  std::optional<Pending> ahead_;    // the next pass's first block's reads, into slot_
  RowStreamStats stats_;
};

}  // namespace strata
