#include "fullgraph/row_block_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "common/clock.h"
#include "common/interrupt.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kReadBytes = uint64_t{4} << 20;

uint64_t AlignDown(uint64_t x) { return x / kDirectIoAlignment * kDirectIoAlignment; }

// Rows [0, rows) of each of `paths`, read whole into charged buffers.
std::vector<AlignedBuffer> ReadRows(const std::vector<std::string>& paths, uint64_t rows,
                                    const RowOffset& offset_of, MemoryBudget& budget,
                                    std::string_view what) {
  std::vector<AlignedBuffer> bytes;
  for (const std::string& path : paths) {
    bytes.emplace_back(budget, std::max<uint64_t>(AlignedSpan(offset_of, 0, rows), 1), what);
    ReadArrayFile(path, bytes.back().data(), offset_of(rows));
  }
  return bytes;
}

}  // namespace

ResidentRows::ResidentRows(const std::vector<std::string>& paths, uint64_t rows,
                           RowOffset offset_of, MemoryBudget& budget, std::string_view what)
    : offset_of_(std::move(offset_of)),
      blocks_{{0, rows}},
      bytes_(ReadRows(paths, rows, offset_of_, budget, what)) {}

void RowBlockSource::ForEachBlock(
    const std::function<void(const RowBlock&, const RowAddress&)>& fn) {
  RowBlockPass pass(*this);
  RowBlock block;
  RowAddress row;
  while (pass.Next(block, row)) fn(block, row);
}

RowBlockPass::RowBlockPass(RowBlockSource& source)
    : source_(source), exceptions_(std::uncaught_exceptions()) {
  source_.BeginPass();
}

RowBlockPass::~RowBlockPass() { source_.EndPass(std::uncaught_exceptions() > exceptions_); }

bool RowBlockPass::Next(RowBlock& block, RowAddress& row) { return source_.NextBlock(block, row); }

bool ResidentRows::NextBlock(RowBlock& block, RowAddress& row) {
  if (handed_) return false;
  handed_ = true;
  block = blocks_[0];
  row = [this](size_t file, uint64_t r) { return bytes_[file].data() + offset_of_(r); };
  return true;
}

StreamedRows::StreamedRows(const std::vector<std::string>& paths, uint64_t rows, uint64_t group,
                           RowOffset offset_of, uint64_t buffer_bytes, IoEngineOptions io,
                           MemoryBudget& budget, std::string_view what, uint64_t resident_bytes,
                           bool overlap)
    : offset_of_(std::move(offset_of)),
      overlap_(overlap),
      buffer_bytes_(AlignDown(buffer_bytes)),
      buffers_(budget, (overlap ? 2 : 1) * paths.size() * buffer_bytes_, what) {
  while (resident_rows_ < rows) {
    const uint64_t next = std::min(rows, resident_rows_ + group);
    if (AlignedSpan(offset_of_, 0, next) > resident_bytes) break;
    resident_rows_ = next;
  }
  if (resident_rows_ > 0) {
    blocks_.push_back({0, resident_rows_});
    prefix_ = ReadRows(paths, resident_rows_, offset_of_, budget, what);
  }
  // The rest, planned as rows [0, rows - resident_rows_) at the same file offsets.
  const uint64_t first = resident_rows_;
  for (const RowBlock& b : PlanRowBlocks(rows - first, group, buffer_bytes,
                                         [&](uint64_t row) { return offset_of_(first + row); })) {
    blocks_.push_back({first + b.begin, first + b.end});
  }
  io.depth = std::max<uint32_t>(io.depth, 1);
  engine_ = MakeIoEngine(io);
  engine_->RegisterBuffer(buffers_.span());
  for (const std::string& path : paths) {
    files_.push_back(engine_->OpenFile(path));
    if (engine_->file_size(files_.back()) < offset_of_(rows)) {
      throw Error::Input(fmt::format("is {} bytes, shorter than its {} rows need",
                                     engine_->file_size(files_.back()), rows),
                         path);
    }
  }
}

StreamedRows::~StreamedRows() {
  if (engine_) DrainDiscardingErrors(*engine_);
}

StreamedRows::Pending StreamedRows::Submit(size_t k, size_t slot) {
  const RowBlock& block = blocks_[k];
  const uint64_t first = AlignDown(offset_of_(block.begin));
  const uint64_t last = first + AlignedSpan(offset_of_, block.begin, block.end);
  std::vector<ReadRequest> reads;
  Pending pending;
  for (size_t f = 0; f < files_.size(); ++f) {
    for (uint64_t offset = first; offset < last; offset += kReadBytes) {
      const auto length = static_cast<uint32_t>(std::min(kReadBytes, last - offset));
      reads.push_back(
          {files_[f], offset, length, Buffer(f, slot) + (offset - first), reads.size()});
      pending.bytes += length;
    }
  }
  engine_->Submit(reads);
  pending.reads = reads.size();
  return pending;
}

void StreamedRows::Wait(const Pending& pending) {
  const uint64_t start = MonotonicNs();
  std::vector<ReadCompletion> done(std::max<size_t>(pending.reads, 1));
  for (size_t reaped = 0; reaped < pending.reads;) {
    reaped += engine_->Reap({done.data(), pending.reads - reaped}, 1);
    ThrowIfInterrupted();
  }
  stats_.wait_s += (MonotonicNs() - start) * 1e-9;
  stats_.bytes_read += pending.bytes;
  stats_.reads += pending.reads;
}

bool StreamedRows::NextBlock(RowBlock& block, RowAddress& row) {
  const size_t k = next_;
  if (k == blocks_.size()) return false;
  ++next_;
  if (k == 0 && resident_rows_ > 0) {
    block = blocks_[0];
    row = [this](size_t file, uint64_t r) { return prefix_[file].data() + offset_of_(r); };
    return true;
  }
  // The pass's first streamed block may be on its way already: the last pass read it ahead.
  const size_t first_streamed = resident_rows_ > 0 ? 1 : 0;
  if (!pending_) {
    pending_ = k == first_streamed && ahead_ ? *ahead_ : Submit(k, slot_);
    ahead_.reset();
  }
  Wait(*pending_);
  pending_.reset();
  const size_t slot = slot_;
  // With overlap, block k + 1 goes into the other buffers while block k is worked on, and
  // after the last block the next pass's first (passes repeat, and a pass's first block would
  // otherwise be waited for); without, block k + 1 is read when it is pulled.
  if (overlap_) {
    slot_ ^= 1;
    if (next_ < blocks_.size()) {
      pending_ = Submit(next_, slot_);
    } else {
      ahead_ = Submit(first_streamed, slot_);
    }
  }
  block = blocks_[k];
  const uint64_t first = AlignDown(offset_of_(block.begin));
  row = [this, slot, first](size_t file, uint64_t r) {
    return Buffer(file, slot) + (offset_of_(r) - first);
  };
  return true;
}

void StreamedRows::EndPass(bool unwinding) noexcept {
  // Abandoned, every read in flight is drained and forgotten, the read-ahead too: nothing lands
  // in the buffers after the pass, and the next pass starts by reading its first block.
  if (!unwinding && next_ == blocks_.size()) return;
  pending_.reset();
  ahead_.reset();
  DrainDiscardingErrors(*engine_);
}

}  // namespace strata
