// Radix sort of packed edge keys, the inner loop of CSC building.
#include <benchmark/benchmark.h>

#include <vector>

#include "common/random.h"
#include "dataset/radix_sort.h"

namespace strata {
namespace {

void BM_RadixSortEdgeKeys(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const int id_bits = static_cast<int>(state.range(1));
  std::vector<uint64_t> original(n), keys(n), scratch(n);
  Rng rng(1);
  uint64_t mask = (uint64_t{1} << id_bits) - 1;
  for (auto& k : original) k = ((rng.Next() & mask) << id_bits) | (rng.Next() & mask);
  for (auto _ : state) {
    keys = original;
    RadixSort<uint64_t>(keys, scratch, 2 * id_bits);
    benchmark::DoNotOptimize(keys.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_RadixSortEdgeKeys)
    ->Args({1 << 22, 24})
    ->Args({1 << 22, 32})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
