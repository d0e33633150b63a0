// How the nn kernels spread work over threads: CSR or CSC segments in ranges of about equal edge
// counts, plain rows in equal ranges, a scatter's target in tiles. Every output element is
// produced by exactly one thread in a fixed order, so a kernel's result never depends on how many
// threads ran it. Small inputs run on the calling thread, where handing a range to another
// thread would cost more than the work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "common/parallel.h"
#include "nn/sparse.h"

namespace strata {

// Below this many scalar operations a kernel runs on one thread: waking a sleeping pool
// worker (common/thread_pool.h) costs some microseconds, about this much arithmetic. (Chosen
// when each call started a thread, tens of microseconds; not re-tuned since.)
inline constexpr uint64_t kMinParallelWork = 1 << 16;
// Above it, each thread is given at least this much: on a many-core machine a kernel of a
// 128-row group split 16 ways handed out parts of a few microseconds each, less than their
// hand-over. Half of kMinParallelWork, so that two threads share whatever is parallel at all.
inline constexpr uint64_t kMinPartWork = kMinParallelWork / 2;

// How many threads, of `threads`, a kernel of `work` scalar operations runs on.
inline unsigned PartsFor(unsigned threads, uint64_t work) {
  if (threads <= 1 || work < kMinParallelWork) return 1;
  return static_cast<unsigned>(std::min<uint64_t>(threads, work / kMinPartWork));
}

// Runs fn(begin, end) over ranges of [0, indptr.size() - 1) of about equal work (SplitByEdges:
// edges plus one per entry; offsets of any width, counted from indptr[0]), skipping empty
// ranges; work_per_edge scales that work into the scalar operations that decide how many
// threads to use.
template <typename Offset, typename Fn>
void ForEdgeRanges(unsigned threads, std::span<const Offset> indptr, uint64_t work_per_edge,
                   Fn&& fn) {
  const uint64_t count = indptr.size() - 1;
  const uint64_t edges = uint64_t{indptr[count]} - uint64_t{indptr[0]};
  const unsigned parts = PartsFor(threads, (edges + count) * work_per_edge);
  if (parts <= 1 || count < 2) {
    fn(uint64_t{0}, count);
    return;
  }
  const std::vector<uint64_t> bounds = SplitByEdges(indptr, parts);
  ParallelFor(parts, parts, [&](uint64_t begin, uint64_t end) {
    for (uint64_t part = begin; part < end; ++part) {
      if (bounds[part] < bounds[part + 1]) fn(bounds[part], bounds[part + 1]);
    }
  });
}

// ForEdgeRanges over the segments of a CSR's or CSC's `indptr` (its destinations or sources).
template <typename Fn>
void ForSegments(unsigned threads, std::span<const uint32_t> indptr, uint64_t work_per_edge,
                 Fn&& fn) {
  ForEdgeRanges(threads, indptr, work_per_edge, [&](uint64_t begin, uint64_t end) {
    fn(static_cast<uint32_t>(begin), static_cast<uint32_t>(end));
  });
}

// Runs fn(begin, end) over equal ranges of [0, rows); work_per_row as above.
template <typename Fn>
void ForRows(unsigned threads, uint64_t rows, uint64_t work_per_row, Fn&& fn) {
  const unsigned parts = PartsFor(threads, rows * work_per_row);
  if (parts <= 1 || rows < 2) {
    fn(uint64_t{0}, rows);
    return;
  }
  ParallelFor(parts, rows, [&](uint64_t begin, uint64_t end) { fn(begin, end); });
}

// Floats in a 64-byte cache line.
inline constexpr size_t kLineFloats = 16;

// A part of the target of a scatter (rows × cols, each source term added to the row its index
// names): rows [row_begin, row_end), columns [col_begin, col_end).
struct ScatterTile {
  uint64_t row_begin = 0, row_end = 0;
  size_t col_begin = 0, col_end = 0;

  bool HoldsRow(uint64_t row) const { return row - row_begin < row_end - row_begin; }
  size_t cols() const { return col_end - col_begin; }
};

// Runs fn(tile) over up to `parts` tiles of a scatter's rows × cols target (dW's or grad_in's
// rows). Each thread reads every source term and adds those that land in its tile, so each
// target element is still summed in source order by one thread, whatever `parts`. Columns are
// cut first, on multiples of kLineFloats, so in rows that start on a cache line (a Matrix's, of a
// multiple of 16 columns) no two threads write one line: threads sharing a line pass it back and
// forth on every write, and a 16-vCPU machine ran a full-graph epoch 2.4× slower on 16 threads
// than on 4 when up to 4 wrote each line of dW. Past cols / 16 column ranges the rows are cut too:
// 64 columns on 16 threads are 4 column ranges × 4 row ranges, where column ranges alone kept the
// scatter on 4 threads.
template <typename Fn>
void ForScatterTiles(unsigned parts, uint64_t rows, size_t cols, Fn&& fn) {
  const uint64_t lines = std::max<uint64_t>(1, (cols + kLineFloats - 1) / kLineFloats);
  const uint64_t wanted = std::max(1u, parts);
  // The most tiles, up to `parts`, with the fewest row ranges (each re-reads the source).
  uint64_t row_parts = 1, col_parts = std::min(lines, wanted);
  for (uint64_t r = 2; r <= std::min<uint64_t>(wanted, rows); ++r) {
    const uint64_t c = std::min(lines, wanted / r);
    if (r * c > row_parts * col_parts) {
      row_parts = r;
      col_parts = c;
    }
  }
  const uint64_t tiles = row_parts * col_parts;
  ParallelFor(static_cast<unsigned>(tiles), tiles, [&](uint64_t first, uint64_t last) {
    for (uint64_t t = first; t < last; ++t) {
      const uint64_t c = t % col_parts, r = t / col_parts;
      ScatterTile tile;
      tile.row_begin = r * rows / row_parts;
      tile.row_end = (r + 1) * rows / row_parts;
      tile.col_begin = std::min<uint64_t>(cols, c * lines / col_parts * kLineFloats);
      tile.col_end = std::min<uint64_t>(cols, (c + 1) * lines / col_parts * kLineFloats);
      if (tile.col_begin < tile.col_end) fn(tile);
    }
  });
}

}  // namespace strata
