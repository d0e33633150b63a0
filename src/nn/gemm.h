// Dense matrix products through OpenBLAS.
//
// Gemm splits C into chunks whose number and bounds depend only on the shape, and runs one
// single-threaded BLAS call per chunk on up to `threads` threads. OpenBLAS's own threading
// picks different kernels and splits for different thread counts (measured: a 13x77x1000
// sgemm differs in the last bits between 1 and 2 OpenBLAS threads), which would make
// training results depend on --threads; with the split fixed by the shape, the same calls
// run whatever the thread count and the results are bit-identical. The first call sets
// OpenBLAS to one thread for the whole process (Strata's nn code owns BLAS threading) and
// matches its kernels to the CPU (nn/blas_core.h).
//
// Gemm also accumulates process-wide counters (calls, seconds, flops) so that benchmarks can
// report the share of a step spent in GEMM; reading them costs nothing on the hot path.
#pragma once

#include <cstdint>
#include <type_traits>

#include "nn/matrix.h"

namespace strata {

enum class Trans { kNo, kYes };

// C = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T. Shapes must agree (op(A) is
// C.rows() x k, op(B) is k x C.cols()); any stride >= cols is fine. beta == 0 ignores the
// previous contents of C (NaN included). Throws strata::Error on a shape mismatch.
template <typename T>
void Gemm(Trans trans_a, Trans trans_b, std::type_identity_t<T> alpha,
          MatrixSpan<const std::type_identity_t<T>> a, MatrixSpan<const std::type_identity_t<T>> b,
          std::type_identity_t<T> beta, MatrixSpan<T> c, unsigned threads = 1);

struct GemmCounters {
  uint64_t calls = 0;
  uint64_t flops = 0;  // 2 * m * n * k per call
  double seconds = 0;  // wall time inside Gemm
};
GemmCounters ReadGemmCounters();
void ResetGemmCounters();
// GFLOP/s of the calls between two readings; 0 when none took time.
double GemmGflops(const GemmCounters& from, const GemmCounters& to);

}  // namespace strata
