// The feature store of a run that samples mini-batches: the kind the user asked for, and for
// the direct store a cache sized around the batches in flight (minibatch/cache_sizing.h) with its
// static hot tier filled by the hotness policy from presampled batches. Shared by training
// (Session) and by the Python data loader (NeighborLoader), so both read features the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "strata/dataset.h"
#include "strata/feature_store.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"
#include "strata/neighbor_sampler.h"
#include "strata/train.h"

namespace strata {

struct TrainingStoreOptions {
  FeatureOptions features;
  uint32_t io_depth = 256;
  uint32_t max_run_ahead = 8;
  // Batches in flight that a reserve holds already (the memory plan's), and the bytes the
  // cache must leave for charges made after the store opens.
  uint32_t reserved_batches = 0;
  uint64_t leave_bytes = 0;
  bool cache_rows = true;  // false: no cache (multistage runs read macro-batches instead)
};

// The `count` nodes whose features training is expected to read most, hottest first, as
// `policy` ranks them (graph/hotness.h; presampling draws batches of a stream training never
// samples). The static hot tier's rows; the Python loader's GPU cache takes them too.
std::vector<uint64_t> HottestNodes(const CscGraph& graph, const NeighborSampler& sampler,
                                   std::span<const uint64_t> seeds, HotnessPolicy policy,
                                   uint64_t count, MemoryBudget& budget);

// Opens the store; `sampler` draws the batches it will serve (presampled for sizing and for
// the hot tier), `seeds` are their seeds. Everything is charged to `budget`.
std::unique_ptr<FeatureStore> OpenTrainingStore(const Dataset& dataset, const CscGraph& graph,
                                                const NeighborSampler& sampler,
                                                std::span<const uint64_t> seeds,
                                                const TrainingStoreOptions& options,
                                                MemoryBudget& budget);

}  // namespace strata
