#include "multistage/history_table.h"

#include <algorithm>
#include <cstring>

#include "common/interrupt.h"
#include "strata/error.h"

namespace strata {
namespace {

// A gather merges the units of nearby rows into reads of at most this, staged this many at once.
constexpr uint64_t kMergedReadBytes = 64 << 10;
constexpr uint64_t kStagingBytes = uint64_t{4} << 20;

uint64_t UnitDown(uint64_t x) { return x / kDirectIoAlignment * kDirectIoAlignment; }
uint64_t UnitUp(uint64_t x) { return UnitDown(x + kDirectIoAlignment - 1); }

std::vector<uint64_t> PartitionBases(std::span<const uint64_t> offsets, uint64_t row_bytes) {
  std::vector<uint64_t> base(offsets.size(), 0);
  for (size_t p = 0; p + 1 < offsets.size(); ++p) {
    base[p + 1] = base[p] + UnitUp((offsets[p + 1] - offsets[p]) * row_bytes);
  }
  return base;
}

}  // namespace

uint64_t HistoryTable::FileBytes(std::span<const uint64_t> offsets, uint64_t row_values) {
  return PartitionBases(offsets, row_values * sizeof(uint16_t)).back();
}

uint64_t HistoryTable::StagingBytes(uint64_t row_values) {
  return std::max(kStagingBytes, UnitUp(row_values * sizeof(uint16_t)) + kDirectIoAlignment);
}

HistoryTable::HistoryTable(std::vector<uint64_t> offsets, uint64_t row_values,
                           const std::string& scratch_dir, uint32_t io_depth, MemoryBudget& budget)
    : offsets_(std::move(offsets)),
      row_values_(row_values),
      base_(PartitionBases(offsets_, row_bytes())),
      file_(scratch_dir, base_.back(), "historical embeddings"),
      staging_(budget, StagingBytes(row_values), "historical embedding reads"),
      stamps_(budget, offsets_.back(), "historical embedding stamps") {
  std::fill_n(stamps_.data(), stamps_.size(), kNeverWritten);
  IoEngineOptions io;
  io.depth = std::max<uint32_t>(io_depth, 1);
  engine_ = MakeIoEngine(io);
  engine_file_ = engine_->OpenFile("/proc/self/fd/" + std::to_string(file_.fd()));
  // A reserved range reads as zeros: float16 zero is all-zero bits.
}

HistoryTable::~HistoryTable() = default;

uint32_t HistoryTable::PartitionOf(uint64_t node) const {
  return static_cast<uint32_t>(std::upper_bound(offsets_.begin(), offsets_.end(), node) -
                               offsets_.begin() - 1);
}

uint64_t HistoryTable::FileOffset(uint64_t node) const {
  const uint32_t p = PartitionOf(node);
  return base_[p] + (node - offsets_[p]) * row_bytes();
}

void HistoryTable::ReadPartition(uint32_t p, std::byte* rows) {
  TransferScratch(file_.fd(), file_.direct(), /*write=*/false, rows, base_[p], PartitionBytes(p),
                  file_.what(), file_.dir());
  bytes_read_ += PartitionBytes(p);
}

void HistoryTable::WritePartition(uint32_t p, std::byte* rows, std::span<const uint32_t> stamps) {
  if (stamps.size() != offsets_[p + 1] - offsets_[p]) {
    throw Error::Internal("a history partition write needs one stamp per node");
  }
  TransferScratch(file_.fd(), file_.direct(), /*write=*/true, rows, base_[p], PartitionBytes(p),
                  file_.what(), file_.dir());
  bytes_written_ += PartitionBytes(p);
  std::copy(stamps.begin(), stamps.end(), stamps_.data() + offsets_[p]);
}

void HistoryTable::Gather(std::span<const uint64_t> nodes, std::span<uint16_t> rows,
                          std::span<uint32_t> stamps) {
  if (rows.size() != nodes.size() * row_values_ || stamps.size() != nodes.size()) {
    throw Error::Internal("history gather: output does not match the nodes");
  }
  const uint64_t row = row_bytes();
  std::vector<ReadRequest> reads;
  std::vector<ReadCompletion> done;
  size_t next = 0;  // the first node not yet copied out
  while (next < nodes.size()) {
    // Reads for the nodes from `next` on, merged while they touch the same or adjacent units,
    // until the staging buffer is full.
    reads.clear();
    uint64_t staged = 0;
    size_t end = next;
    while (end < nodes.size()) {
      const uint64_t first = UnitDown(FileOffset(nodes[end]));
      const uint64_t last = UnitUp(FileOffset(nodes[end]) + row);
      if (!reads.empty() && first <= reads.back().offset + reads.back().length &&
          last - reads.back().offset <= kMergedReadBytes) {
        const uint64_t length = std::max<uint64_t>(reads.back().length, last - reads.back().offset);
        staged += length - reads.back().length;
        if (staged > staging_.size()) break;
        reads.back().length = static_cast<uint32_t>(length);
      } else {
        if (staged + (last - first) > staging_.size()) break;
        reads.push_back({engine_file_, first, static_cast<uint32_t>(last - first),
                         staging_.data() + staged, reads.size()});
        staged += last - first;
      }
      ++end;
    }
    engine_->Submit(reads);
    done.resize(reads.size());
    for (size_t reaped = 0; reaped < reads.size();) {
      reaped += engine_->Reap({done.data(), reads.size() - reaped}, 1);
      ThrowIfInterrupted();
    }
    for (const ReadRequest& r : reads) bytes_read_ += r.length;
    size_t k = 0;
    for (size_t i = next; i < end; ++i) {
      const uint64_t at = FileOffset(nodes[i]);
      while (at >= reads[k].offset + reads[k].length) ++k;
      std::memcpy(rows.data() + i * row_values_, reads[k].buffer + (at - reads[k].offset), row);
      stamps[i] = stamps_[nodes[i]];
    }
    next = end;
  }
}

}  // namespace strata
