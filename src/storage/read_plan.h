// Read planning for direct I/O of fixed-size records (feature rows, adjacency entries). A
// gather's distinct ids, sorted, become few aligned reads: each row needs the aligned span it
// overlaps (its sectors where the file system allows
// 512-byte direct reads, else its 4 KiB blocks), and a row whose span starts less than a
// block after the previous read's end joins that read, up to max_read_bytes. On an SSD a
// request costs about as much as reading 4 KiB more, so a gap shorter than a block is cheaper
// to read through than to skip; and a 1 KiB row read alone costs less device time than its
// whole block. Coalescing never changes what a row decodes to.
//
// Invariants of a plan: reads are sorted by offset and do not overlap; every offset and
// length is a multiple of the alignment; the rows of read r are rows[first_row ..
// first_row + row_count), in id order, and lie wholly inside the read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

struct PlannedRow {
  uint32_t key;             // the caller's index for this row (e.g. its unique-id index)
  uint32_t offset_in_read;  // where the row's bytes start inside the read's buffer
};

struct PlannedRead {
  uint64_t offset;
  uint32_t length;
  uint32_t first_row;
  uint32_t row_count;
};

struct ReadPlan {
  std::vector<PlannedRead> reads;
  std::vector<PlannedRow> rows;

  void Clear() {
    reads.clear();
    rows.clear();
  }
};

// Where records lie in their file: record i at offset i * stride, `bytes` long.
struct RecordLayout {
  uint64_t stride = 0;
  uint64_t bytes = 0;
};

struct ReadShape {
  uint32_t alignment = 4096;           // a power of two dividing 4096 (the file's)
  uint32_t max_read_bytes = 64 << 10;  // bound on a coalesced read, a multiple of 4096
  bool coalesce = true;                // false: every row gets its own read
};

// Appends to `plan` the reads for rows `ids` (sorted ascending, distinct); row ids[i] gets
// key keys[i]. A row longer than max_read_bytes gets a read of its own.
void PlanReads(std::span<const uint64_t> ids, std::span<const uint32_t> keys,
               const RecordLayout& layout, const ReadShape& shape, ReadPlan& plan);

}  // namespace strata
