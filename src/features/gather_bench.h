// The gather benchmark behind `strata bench gather`: batches of ids (uniform random, or the
// k-hop neighbourhoods a sampler would request) gathered from a feature store for a fixed
// time, with the store's cache configured as training would use it, including window
// buffering: the next W batches are generated ahead and pinned.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/feature_store.h"
#include "strata/io_engine.h"

namespace strata {

struct GatherBenchOptions {
  std::string dataset;
  FeatureStoreKind store = FeatureStoreKind::kDirect;
  bool cold = false;          // drop features.bin from the page cache first
  double cache_fraction = 0;  // share of the feature bytes the cache may hold
  double hot_share = 0.5;     // share of the cache given to the static hot tier
  HotnessPolicy hot_policy = HotnessPolicy::kPresample;
  uint64_t presample_batches = 64;
  CachePolicyKind policy = CachePolicyKind::kSieve;
  uint32_t window = 0;         // look-ahead batches pinned in the dynamic tier
  bool khop_ids = false;       // false: uniform random ids
  uint64_t batch_rows = 4096;  // uniform: ids per batch
  uint64_t batch_size = 1000;  // k-hop: seeds per batch
  std::vector<int> fanouts = {15, 10, 5};
  double seconds = 10;
  uint32_t io_depth = 256;
  IoEngineOptions::Kind engine = IoEngineOptions::Kind::kAuto;
  uint32_t max_read_bytes = 64 << 10;
  bool coalesce = true;
  uint64_t memory_budget_bytes = 0;
  uint64_t seed = 1;
};

// Runs the benchmark and returns its report (rows_per_s, useful_bytes_per_s, reads_per_s,
// hit_rate, tier_hit_rates, read_amplification, cpu_seconds_per_million_rows, ...).
nlohmann::ordered_json RunGatherBench(const GatherBenchOptions& options);

}  // namespace strata
