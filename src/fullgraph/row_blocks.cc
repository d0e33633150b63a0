#include "fullgraph/row_blocks.h"

#include <algorithm>

#include "strata/error.h"
#include "strata/io_engine.h"

namespace strata {

uint64_t AlignedSpan(const RowOffset& offset_of, uint64_t begin, uint64_t end) {
  const uint64_t first = offset_of(begin) / kDirectIoAlignment * kDirectIoAlignment;
  const uint64_t last =
      (offset_of(end) + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
  return last - first;
}

uint64_t LargestGroupSpan(uint64_t rows, uint64_t group, const RowOffset& offset_of) {
  uint64_t largest = 0;
  for (uint64_t begin = 0; begin < rows; begin += group) {
    largest = std::max(largest, AlignedSpan(offset_of, begin, std::min(rows, begin + group)));
  }
  return largest;
}

std::vector<RowBlock> PlanRowBlocks(uint64_t rows, uint64_t group, uint64_t buffer_bytes,
                                    const RowOffset& offset_of) {
  if (group == 0) throw Error::Internal("PlanRowBlocks: a group of zero rows");
  std::vector<RowBlock> blocks;
  for (uint64_t begin = 0; begin < rows;) {
    uint64_t end = std::min(rows, begin + group);
    if (AlignedSpan(offset_of, begin, end) > buffer_bytes) {
      throw Error::Internal("PlanRowBlocks: one group of rows does not fit the buffer");
    }
    // Grow by whole groups while the block still fits (Algorithm 1's inner loop, by groups).
    while (end < rows) {
      const uint64_t next = std::min(rows, end + group);
      if (AlignedSpan(offset_of, begin, next) > buffer_bytes) break;
      end = next;
    }
    blocks.push_back({begin, end});
    begin = end;
  }
  return blocks;
}

}  // namespace strata
