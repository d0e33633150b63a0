// How the nn kernels spread work over threads: CSR or CSC segments in ranges of about equal edge
// counts, plain rows in equal ranges. Every output row is produced by exactly one thread in
// a fixed order, so a kernel's result never depends on how many threads ran it. Small inputs
// run on the calling thread, where handing a range to another thread would cost more than the
// work.
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

// Runs fn(c0, c1) over up to `parts` ranges of [0, cols) for kernels whose threads write the
// same rows side by side, each its columns (a scatter into dW's or grad_in's rows): ranges
// start on multiples of kLineFloats, so in rows that start on a cache line (a Matrix's, of a
// multiple of 16 columns) no two threads write one line. Threads sharing a line pass it back and
// forth on every write; on a 16-vCPU machine a full-graph epoch ran 2.4× slower on 16 threads
// than on 4, each line of dW written by up to 4 of them. So there are at most cols / 16 parts;
// under 32 columns, up to `parts` plain ones, sharing their one line.
template <typename Fn>
void ForColumnRanges(unsigned parts, size_t cols, Fn&& fn) {
  const uint64_t lines = (cols + kLineFloats - 1) / kLineFloats;
  if (lines < 2) {
    ParallelFor(std::max(1u, parts), cols, [&](uint64_t c0, uint64_t c1) {
      if (c0 < c1) fn(c0, c1);
    });
    return;
  }
  const unsigned n = static_cast<unsigned>(std::min<uint64_t>(std::max(1u, parts), lines));
  ParallelFor(n, lines, [&](uint64_t l0, uint64_t l1) {
    if (l0 < l1) fn(l0 * kLineFloats, std::min<uint64_t>(cols, l1 * kLineFloats));
  });
}

}  // namespace strata
