// SpGEMM: C = A · B for CSR matrices, Gustavson's row-by-row algorithm — the product AIRES
// multiplies out of core (Â · X with sparse features), here in memory as a kernel that
// `strata bench spgemm` times and `bench/spgemm_vs_graphblas.cc` measures against
// SuiteSparse:GraphBLAS.
//
// Two passes over A's rows. The symbolic pass counts each output row's distinct columns (a
// marker per column of B), so C is allocated at its exact size — AIRES's phase III, memory from
// what the product actually produces instead of a worst-case reservation. The numeric pass
// accumulates each row in a dense accumulator over B's columns and writes it with columns
// ascending. Threads take contiguous ranges of A's rows with their own accumulators; a row's
// sums run in A's then B's stored order, so C does not depend on the thread count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

struct CsrView {
  uint64_t rows = 0, cols = 0;
  std::span<const uint64_t> indptr;  // rows + 1
  std::span<const uint32_t> indices;
  std::span<const float> values;
};

struct CsrMatrix {
  uint64_t rows = 0, cols = 0;
  std::vector<uint64_t> indptr;
  std::vector<uint32_t> indices;
  std::vector<float> values;

  CsrView view() const { return {rows, cols, indptr, indices, values}; }
};

// C = A · B in one call: both passes into vectors. Throws an internal error when A's columns
// are not B's rows.
CsrMatrix SpGemm(const CsrView& a, const CsrView& b, unsigned threads);

// The passes apart, for a caller that charges C's arrays to a budget before allocating them.
// The symbolic pass writes C's row offsets (a.rows + 1 of them) to `c_indptr`; the numeric
// pass writes each row's columns (ascending) and values at those offsets.
void SpGemmSymbolic(const CsrView& a, const CsrView& b, std::span<uint64_t> c_indptr,
                    unsigned threads);
void SpGemmNumeric(const CsrView& a, const CsrView& b, std::span<const uint64_t> c_indptr,
                   std::span<uint32_t> c_indices, std::span<float> c_values, unsigned threads);

// The most either pass allocates besides C: one accumulator over B's columns per thread.
uint64_t SpGemmScratchBytes(uint64_t b_cols, unsigned threads);

}  // namespace strata
