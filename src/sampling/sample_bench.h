// The sampling benchmark behind `strata bench sample`: loads a dataset's topology, samples
// a number of training batches one after another with a NeighborSampler (each batch using
// `threads` threads) and reports throughput and batch shape.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/neighbor_sampler.h"

namespace strata {

struct SampleBenchOptions {
  std::string dataset;
  std::vector<int> fanouts = {15, 10, 5};  // input layer first
  uint64_t batch_size = 1000;
  uint64_t batches = 50;  // continues into later epochs when an epoch has fewer
  unsigned threads = 1;
  uint64_t seed = 1;
  uint64_t memory_budget_bytes = 0;
  LaborOptions labor;
};

// Runs the benchmark and returns its report: batches_per_s, sampled_edges_per_s,
// sample_ms_mean, input_nodes_per_batch_mean (distinct input rows), sources_per_block_mean and
// edges_per_block_mean (input layer first), consecutive_input_overlap (the share of a batch's
// input rows the batch before had too), ...
nlohmann::ordered_json RunSampleBench(const SampleBenchOptions& options);

}  // namespace strata
