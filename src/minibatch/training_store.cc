#include "minibatch/training_store.h"

#include <algorithm>

#include "graph/hotness.h"
#include "minibatch/cache_sizing.h"

namespace strata {
namespace {

constexpr uint64_t kPresampleBatches = 32;
constexpr uint64_t kPresampleEpoch = uint64_t{1} << 40;  // a stream training never samples

}  // namespace

std::vector<uint64_t> HottestNodes(const CscGraph& graph, const NeighborSampler& sampler,
                                   std::span<const uint64_t> seeds, HotnessPolicy policy,
                                   uint64_t count, MemoryBudget& budget) {
  // Whole batches' worth of pieces, so that pieces do not thin the sample.
  const uint64_t presample_batches =
      std::min(kPresampleBatches * sampler.pieces_per_batch(), sampler.batches_per_epoch());
  ChargedArray<float> scores = HotnessScores(
      policy, graph, seeds,
      [&](uint64_t b) { return sampler.Sample(kPresampleEpoch, b).input_nodes(); },
      presample_batches, budget);
  return TopScored(scores, count, budget);
}

std::unique_ptr<FeatureStore> OpenTrainingStore(const Dataset& dataset, const CscGraph& graph,
                                                const NeighborSampler& sampler,
                                                std::span<const uint64_t> seeds,
                                                const TrainingStoreOptions& o,
                                                MemoryBudget& budget) {
  const FeatureOptions& f = o.features;
  DirectStoreOptions direct;
  direct.io.depth = o.io_depth;
  direct.max_read_bytes = f.max_read_bytes;
  direct.policy = f.cache_policy;
  if (f.store == FeatureStoreKind::kDirect) {
    const DatasetMeta& meta = dataset.meta();
    CacheSizingInputs in;
    in.cache_fraction = o.cache_rows ? f.cache_fraction : 0;
    // A few batches tell how wide one is, which only a cache's sizing uses. Without a cache
    // they are not sampled: at full neighbourhoods on a large graph (strata eval --layerwise)
    // they are most of it, gigabytes of sampler memory the budget does not see.
    for (uint64_t b = 0;
         in.cache_fraction != 0 && b < std::min<uint64_t>(3, sampler.batches_per_epoch()); ++b) {
      in.widest_batch_rows =
          std::max<uint64_t>(in.widest_batch_rows, sampler.Sample(0, b).input_nodes().size());
    }
    in.num_nodes = meta.num_nodes;
    in.feature_dim = meta.feature_dim;
    in.row_bytes = meta.feature_dim * FeatureDtypeBytes(meta.feature_dtype);
    in.max_run_ahead = o.max_run_ahead;
    in.reserved_batches = o.reserved_batches;
    in.io_depth = o.io_depth;
    in.max_read_bytes = f.max_read_bytes;
    in.hot_share = f.hot_share;
    in.available_bytes = budget.available() - std::min(budget.available(), o.leave_bytes);
    const CacheSizes sizes = SizeFeatureCache(in);
    direct.dynamic_rows = sizes.dynamic_rows;
    direct.max_pinned_ids = sizes.max_pinned_ids;
    if (sizes.hot_rows > 0) {
      direct.hot_ids = HottestNodes(graph, sampler, seeds, f.hot_policy, sizes.hot_rows, budget);
    }
  }
  return OpenFeatureStore(dataset, f.store, direct, budget);
}

}  // namespace strata
