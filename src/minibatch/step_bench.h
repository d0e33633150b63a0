// The step benchmark behind `strata bench step`: the first batches of epoch 0 taken one stage
// at a time — sample, gather, then forward + loss + backward + optimizer — so that each
// stage's cost is measured alone, with the share of the step spent in GEMM.
#pragma once

#include <cstdint>
#include <string>

#include "strata/train.h"

namespace strata {

struct StepBenchResult {
  uint64_t batches = 0;
  double step_ms_median = 0;  // forward + loss + backward + optimizer
  double sample_ms_mean = 0;
  double gather_ms_mean = 0;
  double gemm_share = 0;  // of step time
  double gemm_gflops = 0;
  std::string blas_core;  // the OpenBLAS kernels that ran the GEMMs
  double input_rows_mean = 0;
};

// Times `batches` training steps (at most an epoch's) of the run `options` describe. The first
// step grows every buffer and is left out of the step figures unless it is the only one.
StepBenchResult RunStepBench(const TrainOptions& options, uint64_t batches);

}  // namespace strata
