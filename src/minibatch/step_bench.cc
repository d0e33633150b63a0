#include "minibatch/step_bench.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/interrupt.h"
#include "minibatch/session.h"
#include "nn/blas_core.h"
#include "nn/gemm.h"

namespace strata {
namespace {

double Milliseconds(std::chrono::steady_clock::time_point from,
                    std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

StepBenchResult RunStepBench(const TrainOptions& o, uint64_t batches) {
  CheckTrainOptions(o);
  Session session(o, Dataset::Open(o.dataset));
  auto optimizer = MakeOptimizer(o.optimizer, session.model().model().Parameters());
  const NeighborSampler& sampler = session.sampler();
  const uint64_t dim = session.dataset().meta().feature_dim;
  batches = std::min(batches, sampler.batches_per_epoch());
  std::vector<double> step_ms;
  double sample_ms = 0, gather_ms = 0, rows = 0, gemm_s = 0;
  uint64_t gemm_flops = 0;
  for (uint64_t b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    ReadyBatch ready;
    ready.batch = sampler.Sample(0, b);
    const auto t1 = std::chrono::steady_clock::now();
    ready.rows = ready.batch.input_nodes().size();
    ready.features =
        RowBuffer(ChargedArray<float>(session.budget(), ready.rows * dim, "batch input features"));
    session.store().Gather(ready.batch.input_nodes(), {ready.features.data(), ready.rows * dim});
    const auto t2 = std::chrono::steady_clock::now();
    ResetGemmCounters();
    session.model().TrainStep(ready, 0, *optimizer);
    const GemmCounters gemm = ReadGemmCounters();
    const auto t3 = std::chrono::steady_clock::now();
    if (b > 0 || batches == 1) {
      step_ms.push_back(Milliseconds(t2, t3));
      gemm_s += gemm.seconds;
      gemm_flops += gemm.flops;
    }
    sample_ms += Milliseconds(t0, t1);
    gather_ms += Milliseconds(t1, t2);
    rows += ready.rows;
    ThrowIfInterrupted();
  }
  StepBenchResult result;
  result.batches = batches;
  if (batches == 0) return result;
  std::vector<double> sorted = step_ms;
  std::sort(sorted.begin(), sorted.end());
  result.step_ms_median = sorted[sorted.size() / 2];
  double step_total_s = 0;
  for (double ms : step_ms) step_total_s += ms / 1e3;
  result.gemm_share = step_total_s > 0 ? gemm_s / step_total_s : 0;
  result.gemm_gflops = gemm_s > 0 ? gemm_flops / gemm_s / 1e9 : 0;
  result.sample_ms_mean = sample_ms / batches;
  result.gather_ms_mean = gather_ms / batches;
  result.input_rows_mean = rows / batches;
  result.blas_core = BlasCoreName();
  return result;
}

}  // namespace strata
