// SpGEMM: C = A · B for CSR matrices, Gustavson's row-by-row algorithm — the product AIRES
// multiplies out of core (Â · X with sparse features), here in memory as a kernel that
// `bench/spgemm_bench.cc` measures against SuiteSparse:GraphBLAS.
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

// Throws an internal error when A's columns are not B's rows.
CsrMatrix SpGemm(const CsrView& a, const CsrView& b, unsigned threads);

}  // namespace strata
