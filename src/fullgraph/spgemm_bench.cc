#include "fullgraph/spgemm_bench.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "fullgraph/csr_files.h"
#include "nn/spgemm.h"
#include "strata/error.h"

namespace strata {
namespace {

uint64_t MultiplyAdds(const CsrView& a, const CsrView& x) {
  uint64_t count = 0;
  for (uint32_t k : a.indices) count += x.indptr[k + 1] - x.indptr[k];
  return count;
}

// One product, charged before each of its arrays is allocated; returns its stored values.
uint64_t Multiply(const CsrView& a, const CsrView& x, unsigned threads, MemoryBudget& budget) {
  TrackedCharge scratch(budget, "SpGEMM accumulators");
  scratch.Update(SpGemmScratchBytes(x.cols, threads));
  ChargedArray<uint64_t> indptr(budget, a.rows + 1, "the product's offsets");
  SpGemmSymbolic(a, x, {indptr.data(), indptr.size()}, threads);
  const uint64_t nnz = indptr[a.rows];
  ChargedArray<uint32_t> indices(budget, nnz, "the product's column ids");
  ChargedArray<float> values(budget, nnz, "the product's values");
  SpGemmNumeric(a, x, {indptr.data(), indptr.size()}, {indices.data(), nnz}, {values.data(), nnz},
                threads);
  return nnz;
}

}  // namespace

SpGemmBenchResult RunSpGemmBench(const SpGemmBenchOptions& o) {
  if (o.repeats == 0) throw Error::Input("--repeats must be at least 1");
  const Dataset dataset = Dataset::Open(o.dataset);
  MemoryBudget budget(o.memory_budget_bytes);
  // X first: a dataset without sparse features is refused before Â is built.
  const ChargedCsr x = ReadSparseFeatures(dataset, budget);
  const ChargedCsr a = ReadNormalisedAdjacency(dataset, dataset.meta().num_nodes, budget);
  const unsigned threads = std::max(1u, o.threads);

  SpGemmBenchResult r;
  r.rows = a.rows;
  r.cols = x.cols;
  r.a_nnz = a.nnz();
  r.x_nnz = x.nnz();
  r.multiply_adds = MultiplyAdds(a.view(), x.view());
  std::vector<double> seconds;
  for (uint32_t i = 0; i < o.repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    r.product_nnz = Multiply(a.view(), x.view(), threads, budget);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  r.min_s = seconds.front();
  const size_t mid = seconds.size() / 2;
  r.median_s = seconds.size() % 2 ? seconds[mid] : (seconds[mid - 1] + seconds[mid]) / 2;
  r.gflops = r.median_s > 0 ? 2.0 * r.multiply_adds / r.median_s / 1e9 : 0;
  r.budget_peak_bytes = budget.peak();
  r.peak_rss_bytes = PeakRssBytes();
  return r;
}

}  // namespace strata
