// The benchmark behind `strata bench spgemm`: Â · X (csr_files.h) with Strata's SpGEMM
// (nn/spgemm.h), the product AIRES multiplies out of core, timed in memory. Each repeat runs
// both passes and allocates the product afresh, so the times include sizing and allocating it.
//
// Memory: Â, X, the product and the SpGEMM's accumulators are charged to the budget (the
// product before it is allocated, at the size the symbolic pass found); one product lives at
// a time.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

struct SpGemmBenchOptions {
  std::string dataset;
  unsigned threads = 1;
  uint32_t repeats = 3;
  uint64_t memory_budget_bytes = 0;
};

struct SpGemmBenchResult {
  uint64_t rows = 0;  // of Â and of the product
  uint64_t cols = 0;  // of X and of the product
  uint64_t a_nnz = 0, x_nnz = 0, product_nnz = 0;
  // Σ over Â's stored values (i, k) of X's stored values in row k: the multiply-adds a
  // row-by-row product cannot avoid.
  uint64_t multiply_adds = 0;
  double min_s = 0, median_s = 0;
  double gflops = 0;  // 2 × multiply_adds / median_s, in 10^9 per second
  uint64_t budget_peak_bytes = 0;
  uint64_t peak_rss_bytes = 0;
};

// Throws an input error for a dataset without sparse features or a budget too small.
SpGemmBenchResult RunSpGemmBench(const SpGemmBenchOptions& options);

}  // namespace strata
