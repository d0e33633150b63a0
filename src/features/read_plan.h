// Read planning for direct I/O. A gather's distinct ids, sorted, become few block-aligned
// reads: each row needs the 4 KiB blocks it overlaps, and rows whose blocks are shared or
// adjacent are coalesced into one read of at most max_read_bytes. Coalescing never changes
// what a row decodes to; it only trades request count against bytes read.
//
// Invariants of a plan: reads are sorted by offset and do not overlap; every offset and
// length is a multiple of the block size; the rows of read r are rows[first_row ..
// first_row + row_count), in id order, and lie wholly inside the read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "features/row_codec.h"

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

// Appends to `plan` the reads for rows `ids` (sorted ascending, distinct); row ids[i] gets
// key keys[i]. `max_read_bytes` (a multiple of the block size) bounds coalesced reads; a row
// longer than it gets a read of its own. Without `coalesce`, every row gets its own read.
void PlanReads(std::span<const uint64_t> ids, std::span<const uint32_t> keys,
               const RowLayout& layout, uint32_t max_read_bytes, ReadPlan& plan,
               bool coalesce = true);

}  // namespace strata
