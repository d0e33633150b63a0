// Row block-wise (RoBW) blocking, AIRES Algorithm 1 (S. Jayakody et al., "AIRES: Accelerating
// Out-of-Core GCNs via Algorithm-System Co-Design", §III-A): a row-ordered file (the adjacency's
// in-neighbour lists, the feature rows) is cut into consecutive blocks of whole rows, each as
// large as its buffer holds, so that every block can be multiplied on its own and no partial
// row is carried over to, or merged with, the next block. The block size adapts to each
// block's nonzeros: a block of dense rows is a fixed number of rows, a block of adjacency
// lists as many rows as their edges allow.
//
// Unlike Algorithm 1, blocks are made of whole groups of `group` rows (the last group may be
// shorter): the full-graph trainer draws input dropout per group and, for dense input,
// accumulates weight gradients one group at a time, so that those masks and the order of those
// sums, and so the losses, are the same whatever the budget's blocks.
//
// Invariants of a plan: blocks are non-empty, consecutive, start at row 0, end at `rows`, and
// begin and end on group boundaries (or `rows`); each block's direct-I/O span fits the buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace strata {

struct RowBlock {
  uint64_t begin = 0;  // first row
  uint64_t end = 0;    // one past the last row
};

// Byte offset in the file of row r's first byte; offset_of(rows) is the end of the last row.
using RowOffset = std::function<uint64_t(uint64_t row)>;

// Bytes a buffer needs to read rows [begin, end) with direct reads: the byte range widened to
// kDirectIoAlignment at both ends.
uint64_t AlignedSpan(const RowOffset& offset_of, uint64_t begin, uint64_t end);

// The largest AlignedSpan of one group: the smallest buffer a plan can use.
uint64_t LargestGroupSpan(uint64_t rows, uint64_t group, const RowOffset& offset_of);

// Cuts rows [0, rows) into blocks of whole groups, each the most consecutive groups whose
// AlignedSpan is at most buffer_bytes. Throws an internal error when one group does not fit
// (callers check LargestGroupSpan first, to say which budget would work).
std::vector<RowBlock> PlanRowBlocks(uint64_t rows, uint64_t group, uint64_t buffer_bytes,
                                    const RowOffset& offset_of);

}  // namespace strata
