#include "strata/neighbor_loader.h"

#include <utility>

#include "features/row_normalize.h"
#include "strata/error.h"
#include "strata/graph.h"
#include "train/batch_pipeline.h"
#include "train/training_store.h"

namespace strata {

// Members are destroyed in reverse order: the pipeline before the store it reads, everything
// before the budget it is charged to.
struct NeighborLoader::State {
  LoaderOptions options;
  MemoryBudget budget;
  Dataset dataset;
  std::unique_ptr<CscGraph> graph;
  ChargedArray<int32_t> labels;  // empty when the dataset has none
  std::unique_ptr<NeighborSampler> sampler;
  std::unique_ptr<FeatureStore> store;
  std::unique_ptr<BatchPipeline> pipeline;

  State(const LoaderOptions& o, Dataset opened)
      : options(o), budget(o.memory_budget_bytes), dataset(std::move(opened)) {}
};

NeighborLoader::NeighborLoader(const LoaderOptions& o)
    : state_(std::make_unique<State>(o, Dataset::Open(o.dataset))) {
  State& s = *state_;
  const DatasetMeta& meta = s.dataset.meta();
  if (meta.feature_dim == 0) throw Error::Input("dataset has no features", s.dataset.dir());
  if (o.max_run_ahead == 0) throw Error::Input("run_ahead must be positive");
  TopologyOptions topology = {TopologyPlacement::kAuto, -1, {}};
  topology.io.depth = o.io_depth;
  s.graph = std::make_unique<CscGraph>(s.dataset, s.budget, topology);
  if (meta.num_classes > 0) s.labels = s.dataset.ReadLabels(s.budget);
  const std::vector<uint64_t> seeds = s.dataset.ReadSplit(o.split);
  s.sampler = std::make_unique<NeighborSampler>(*s.graph, seeds, o.fanouts, o.batch_size, o.seed,
                                                s.budget, o.threads, o.order);
  TrainingStoreOptions store;
  store.features = o.features;
  store.io_depth = o.io_depth;
  store.max_run_ahead = o.max_run_ahead;
  store.hidden = o.hidden;
  s.store = OpenTrainingStore(s.dataset, *s.graph, *s.sampler, seeds, store, s.budget);
}

NeighborLoader::~NeighborLoader() { StopEpoch(); }

const Dataset& NeighborLoader::dataset() const { return state_->dataset; }
uint64_t NeighborLoader::batches_per_epoch() const { return state_->sampler->batches_per_epoch(); }
uint64_t NeighborLoader::seeds_per_epoch() const { return state_->sampler->seeds_per_epoch(); }
const MemoryBudget& NeighborLoader::budget() const { return state_->budget; }

void NeighborLoader::StartEpoch(uint64_t epoch) {
  StopEpoch();
  PipelineOptions pipeline;
  pipeline.epoch = epoch;
  pipeline.max_run_ahead = state_->options.max_run_ahead;
  pipeline.max_reads_in_flight = state_->options.io_depth;
  state_->pipeline =
      std::make_unique<BatchPipeline>(*state_->sampler, *state_->store, pipeline, state_->budget);
}

void NeighborLoader::StopEpoch() { state_->pipeline.reset(); }

std::optional<LoaderBatch> NeighborLoader::Next(const std::function<void()>& poll) {
  State& s = *state_;
  if (!s.pipeline) return std::nullopt;
  std::optional<ReadyBatch> ready = poll ? s.pipeline->Next(poll) : s.pipeline->Next();
  if (!ready) {
    StopEpoch();
    return std::nullopt;
  }
  LoaderBatch out;
  out.batch = std::move(ready->batch);
  out.features = std::move(ready->features);
  const uint64_t dim = s.dataset.meta().feature_dim;
  if (s.options.features.row_normalize) {
    NormalizeRows({out.features.data(), out.batch.input_nodes().size() * dim}, dim);
  }
  const Block& last = out.batch.blocks.back();
  out.labels.resize(last.num_dst());
  for (uint32_t i = 0; i < last.num_dst(); ++i) {
    out.labels[i] = s.labels.size() == 0 ? -1 : s.labels[last.src_nodes[i]];
  }
  return out;
}

FeatureStoreStats NeighborLoader::store_stats() const {
  // While an epoch runs the store belongs to its fetch thread; the pipeline keeps a copy.
  return state_->pipeline ? state_->pipeline->store_stats() : state_->store->stats();
}

}  // namespace strata
