// The dropout kernels on the shapes of a SAGE-3 step (hidden 256: the second layer's ~54k
// rows) and of a wide dense input (767 columns): drawing the masks is most of their cost.
#include <benchmark/benchmark.h>

#include "nn/dropout.h"
#include "nn/matrix.h"

namespace strata {
namespace {

void BM_ReluDropout(benchmark::State& state) {
  Matrix x(static_cast<size_t>(state.range(0)), static_cast<size_t>(state.range(1)));
  x.Fill(1.0f);
  const unsigned threads = static_cast<unsigned>(state.range(2));
  uint64_t seed = 1;
  for (auto _ : state) {
    ReluDropout<float>(x.span(), 0.5, seed++, threads);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * x.rows() * x.cols());
}
BENCHMARK(BM_ReluDropout)
    ->Args({54000, 256, 1})
    ->Args({54000, 256, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_Dropout(benchmark::State& state) {
  Matrix in(static_cast<size_t>(state.range(0)), static_cast<size_t>(state.range(1)));
  Matrix out(in.rows(), in.cols());
  in.Fill(1.0f);
  uint64_t seed = 1;
  for (auto _ : state) {
    Dropout<float>(in.span(), out.span(), 0.5, seed++, 1);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * in.rows() * in.cols());
}
BENCHMARK(BM_Dropout)->Args({13752, 767})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
