// Â · X with Strata's SpGEMM (nn/spgemm.h) against SuiteSparse:GraphBLAS's GrB_mxm (the
// PLUS_TIMES semiring over float) on the same matrices and thread count: Â the first R rows of
// a dataset's GCN-normalised adjacency with self loops, X its sparse features (`strata
// generate --feature-density`), both read by fullgraph/csr_files.h as `strata bench spgemm`
// reads them. GraphBLAS is linked by this benchmark only. Prints one JSON
// line: the product's size, each side's best time over the repeats, the speed ratio, and the
// largest difference over a sample of the product's entries.
//   spgemm_vs_graphblas DATASET [THREADS=2] [REPEATS=3] [ROWS=all]
#include <fmt/format.h>

// GraphBLAS.h is a C header without C++ linkage guards.
extern "C" {
#include <GraphBLAS.h>
}

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fullgraph/csr_files.h"
#include "nn/spgemm.h"
#include "strata/error.h"
#include "strata/memory_budget.h"

namespace strata {
namespace {

void Check(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS)
    throw Error::Internal(fmt::format("GraphBLAS {} failed: {}", what, int{info}));
}

GrB_Matrix ToGraphBlas(const CsrView& m) {
  std::vector<GrB_Index> rows(m.indices.size()), cols(m.indices.size());
  for (uint64_t i = 0; i < m.rows; ++i) {
    for (uint64_t k = m.indptr[i]; k < m.indptr[i + 1]; ++k) {
      rows[k] = i;
      cols[k] = m.indices[k];
    }
  }
  GrB_Matrix g = nullptr;
  Check(GrB_Matrix_new(&g, GrB_FP32, m.rows, m.cols), "Matrix_new");
  Check(GrB_Matrix_build_FP32(g, rows.data(), cols.data(), m.values.data(), m.indices.size(),
                              GrB_PLUS_FP32),
        "Matrix_build");
  Check(GrB_Matrix_wait(g, GrB_MATERIALIZE), "Matrix_wait");
  return g;
}

template <typename Fn>
double BestSeconds(int repeats, Fn&& fn) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

int Run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: spgemm_vs_graphblas DATASET [THREADS] [REPEATS] [ROWS]\n");
    return 2;
  }
  const Dataset dataset = Dataset::Open(argv[1]);
  const unsigned threads = argc > 2 ? std::stoul(argv[2]) : 2;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  const uint64_t rows =
      std::min<uint64_t>(argc > 4 ? std::stoull(argv[4]) : ~0ull, dataset.meta().num_nodes);
  MemoryBudget budget(PhysicalMemoryBytes());
  const ChargedCsr x = ReadSparseFeatures(dataset, budget);
  const ChargedCsr a = ReadNormalisedAdjacency(dataset, rows, budget);

  CsrMatrix ours;
  const double ours_s = BestSeconds(repeats, [&] {
    ours = CsrMatrix();
    ours = SpGemm(a.view(), x.view(), threads);
  });

  Check(GrB_init(GrB_NONBLOCKING), "init");
  Check(GxB_Global_Option_set_INT32(static_cast<GxB_Option_Field>(GxB_NTHREADS),
                                    static_cast<int32_t>(threads)),
        "set threads");
  GrB_Matrix ga = ToGraphBlas(a.view()), gx = ToGraphBlas(x.view()), gc = nullptr;
  const double graphblas_s = BestSeconds(repeats, [&] {
    if (gc) GrB_Matrix_free(&gc);
    Check(GrB_Matrix_new(&gc, GrB_FP32, a.rows, x.cols), "Matrix_new");
    Check(GrB_mxm(gc, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP32, ga, gx, nullptr), "mxm");
    Check(GrB_Matrix_wait(gc, GrB_MATERIALIZE), "Matrix_wait");
  });
  GrB_Index nvals = 0;
  Check(GrB_Matrix_nvals(&nvals, gc), "nvals");
  // Every 1009th stored entry of ours, looked up in GraphBLAS's product.
  double max_diff = 0;
  for (uint64_t i = 0; i < ours.rows; ++i) {
    for (uint64_t k = ours.indptr[i]; k < ours.indptr[i + 1]; k += 1009) {
      float theirs = NAN;
      Check(GrB_Matrix_extractElement_FP32(&theirs, gc, i, ours.indices[k]), "extractElement");
      max_diff = std::max(max_diff, static_cast<double>(std::abs(theirs - ours.values[k])));
    }
  }
  std::printf(
      "{\"rows\": %llu, \"a_nnz\": %llu, \"x_nnz\": %llu, \"product_nnz\": %llu, "
      "\"graphblas_nnz\": %llu, \"threads\": %u, \"strata_s\": %.4f, \"graphblas_s\": %.4f, "
      "\"speed_vs_graphblas\": %.3f, \"max_abs_diff_sampled\": %.3g}\n",
      static_cast<unsigned long long>(a.rows), static_cast<unsigned long long>(a.nnz()),
      static_cast<unsigned long long>(x.nnz()),
      static_cast<unsigned long long>(ours.indices.size()), static_cast<unsigned long long>(nvals),
      threads, ours_s, graphblas_s, graphblas_s / ours_s, max_diff);
  GrB_Matrix_free(&ga);
  GrB_Matrix_free(&gx);
  GrB_Matrix_free(&gc);
  GrB_finalize();
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  try {
    return strata::Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spgemm_vs_graphblas: %s\n", e.what());
    return 2;
  }
}
