#include "nn/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "common/parallel.h"
#include "nn/blas_core.h"
#include "strata/error.h"

namespace strata {
namespace {

std::atomic<uint64_t> gemm_calls{0};
std::atomic<uint64_t> gemm_flops{0};
std::atomic<uint64_t> gemm_nanos{0};

// Before the first BLAS call: the CPU's kernels (nn/blas_core.h), and one OpenBLAS thread.
void ConfigureBlas() {
  static std::once_flag once;
  std::call_once(once, [] {
    MatchBlasCoreToCpu();
    openblas_set_num_threads(1);
  });
}

CBLAS_TRANSPOSE ToCblas(Trans t) { return t == Trans::kYes ? CblasTrans : CblasNoTrans; }

void CallBlas(Trans ta, Trans tb, size_t m, size_t n, size_t k, float alpha, const float* a,
              size_t lda, const float* b, size_t ldb, float beta, float* c, size_t ldc) {
  cblas_sgemm(CblasRowMajor, ToCblas(ta), ToCblas(tb), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}
void CallBlas(Trans ta, Trans tb, size_t m, size_t n, size_t k, double alpha, const double* a,
              size_t lda, const double* b, size_t ldb, double beta, double* c, size_t ldc) {
  cblas_dgemm(CblasRowMajor, ToCblas(ta), ToCblas(tb), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// Chunks of C of at least kMinChunk rows (or columns), at most kMaxChunks of them, and only
// when the product is large enough that a chunk's work dwarfs re-packing the other operand.
constexpr size_t kMinChunk = 128;
constexpr size_t kMaxChunks = 8;
constexpr double kMinChunkFlops = 4e6;

size_t ChunkCount(size_t extent, double flops) {
  size_t by_extent = extent / kMinChunk;
  size_t by_work = static_cast<size_t>(flops / kMinChunkFlops);
  return std::max<size_t>(1, std::min({kMaxChunks, by_extent, by_work}));
}

}  // namespace

template <typename T>
void Gemm(Trans trans_a, Trans trans_b, std::type_identity_t<T> alpha,
          MatrixSpan<const std::type_identity_t<T>> a, MatrixSpan<const std::type_identity_t<T>> b,
          std::type_identity_t<T> beta, MatrixSpan<T> c, unsigned threads) {
  const size_t m = c.rows();
  const size_t n = c.cols();
  const size_t k = trans_a == Trans::kNo ? a.cols() : a.rows();
  const size_t a_rows = trans_a == Trans::kNo ? a.rows() : a.cols();
  const size_t b_rows = trans_b == Trans::kNo ? b.rows() : b.cols();
  const size_t b_cols = trans_b == Trans::kNo ? b.cols() : b.rows();
  if (a_rows != m || b_rows != k || b_cols != n) {
    throw Error::Internal("Gemm shape mismatch: op(A) " + std::to_string(a_rows) + "x" +
                          std::to_string(k) + ", op(B) " + std::to_string(b_rows) + "x" +
                          std::to_string(b_cols) + ", C " + std::to_string(m) + "x" +
                          std::to_string(n));
  }
  if (m == 0 || n == 0) return;
  ConfigureBlas();
  auto start = std::chrono::steady_clock::now();
  if (k == 0) {
    for (size_t i = 0; i < m; ++i) {
      T* row = c.row(i);
      for (size_t j = 0; j < n; ++j) row[j] = beta == T{0} ? T{0} : beta * row[j];
    }
  } else {
    // BLAS wants leading dimensions >= 1 even for a single row or column.
    const size_t lda = std::max<size_t>(1, a.stride());
    const size_t ldb = std::max<size_t>(1, b.stride());
    const size_t ldc = std::max<size_t>(1, c.stride());
    const double flops =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    // Split the longer side of C.
    const bool by_rows = m >= n;
    const size_t extent = by_rows ? m : n;
    const size_t chunks = ChunkCount(extent, flops);
    auto run_chunk = [&](size_t chunk) {
      size_t begin = extent * chunk / chunks;
      size_t end = extent * (chunk + 1) / chunks;
      if (by_rows) {
        // Rows [begin, end) of op(A) and C.
        const T* a_part = trans_a == Trans::kNo ? a.row(begin) : a.data() + begin;
        CallBlas(trans_a, trans_b, end - begin, n, k, alpha, a_part, lda, b.data(), ldb, beta,
                 c.row(begin), ldc);
      } else {
        // Columns [begin, end) of op(B) and C.
        const T* b_part = trans_b == Trans::kNo ? b.data() + begin : b.row(begin);
        CallBlas(trans_a, trans_b, m, end - begin, k, alpha, a.data(), lda, b_part, ldb, beta,
                 c.data() + begin, ldc);
      }
    };
    if (chunks == 1 || threads <= 1) {
      for (size_t chunk = 0; chunk < chunks; ++chunk) run_chunk(chunk);
    } else {
      ParallelFor(threads, chunks, [&](uint64_t begin, uint64_t end) {
        for (uint64_t chunk = begin; chunk < end; ++chunk) run_chunk(chunk);
      });
    }
    gemm_flops.fetch_add(static_cast<uint64_t>(flops), std::memory_order_relaxed);
  }
  auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  gemm_nanos.fetch_add(static_cast<uint64_t>(nanos), std::memory_order_relaxed);
  gemm_calls.fetch_add(1, std::memory_order_relaxed);
}

GemmCounters ReadGemmCounters() {
  GemmCounters counters;
  counters.calls = gemm_calls.load(std::memory_order_relaxed);
  counters.flops = gemm_flops.load(std::memory_order_relaxed);
  counters.seconds = static_cast<double>(gemm_nanos.load(std::memory_order_relaxed)) * 1e-9;
  return counters;
}

double GemmGflops(const GemmCounters& from, const GemmCounters& to) {
  const double seconds = to.seconds - from.seconds;
  return seconds > 0 ? static_cast<double>(to.flops - from.flops) / seconds / 1e9 : 0.0;
}

void ResetGemmCounters() {
  gemm_calls.store(0, std::memory_order_relaxed);
  gemm_flops.store(0, std::memory_order_relaxed);
  gemm_nanos.store(0, std::memory_order_relaxed);
}

template void Gemm<float>(Trans, Trans, float, MatrixSpan<const float>, MatrixSpan<const float>,
                          float, MatrixSpan<float>, unsigned);
template void Gemm<double>(Trans, Trans, double, MatrixSpan<const double>, MatrixSpan<const double>,
                           double, MatrixSpan<double>, unsigned);

}  // namespace strata
