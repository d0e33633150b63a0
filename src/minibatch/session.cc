#include "minibatch/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "fullgraph/full_graph_plan.h"
#include "minibatch/training_store.h"
#include "strata/error.h"

namespace strata {
namespace {

ModelConfig ModelConfigOf(const TrainOptions& o, const DatasetMeta& meta) {
  ModelConfig config;
  static_cast<ModelOptions&>(config) = o.model;
  config.in_dim = meta.feature_dim;
  config.num_classes = meta.num_classes;
  config.seed = o.seed;
  config.threads = o.threads;
  return config;
}

TopologyOptions TopologyOf(const TrainOptions& o) {
  TopologyOptions topology = o.topology;
  topology.io.depth = o.io_depth;
  return topology;
}

}  // namespace

void CheckTrainOptions(const TrainOptions& o) {
  const size_t layers = o.model.layers;
  if (o.full_graph) {
    CheckFullGraphOptions(o);
  } else if (layers == 0 || o.sampling.fanouts.size() != layers) {
    throw Error::Input(fmt::format("--fanouts lists {} layers, --layers is {}",
                                   o.sampling.fanouts.size(), layers));
  }
  if (!o.sampling.eval_fanouts.empty() && o.sampling.eval_fanouts.size() != layers) {
    throw Error::Input("--eval-fanouts must list one fanout per layer");
  }
  if (!o.sampling.eval_fanouts.empty() && o.eval == EvalMode::kLayerwise) {
    throw Error::Input(
        "--eval-fanouts samples evaluation neighbourhoods; layer-wise evaluation uses full ones");
  }
  if (o.sampling.batch_size == 0) throw Error::Input("--batch-size must be positive");
  if (o.max_run_ahead == 0) throw Error::Input("--run-ahead must be positive");
  CheckModelOptions(o.model);
  if (!(o.optimizer.lr > 0)) throw Error::Input("--lr must be positive");
}

Session::Session(const TrainOptions& o, Dataset dataset)
    : options_(o), budget_(o.memory_budget_bytes), dataset_(std::move(dataset)) {
  const DatasetMeta& meta = dataset_.meta();
  if (meta.num_classes == 0) throw Error::Input("dataset has no labels", dataset_.dir());
  if (meta.feature_dim == 0) throw Error::Input("dataset has no features", dataset_.dir());
  graph_ = std::make_unique<CscGraph>(dataset_, budget_, TopologyOf(o));
  model_ = std::make_unique<MiniBatchModel>(ModelConfigOf(o, meta), *graph_,
                                            dataset_.ReadLabels(budget_), o.features.row_normalize,
                                            budget_);
  for (Split split : kAllSplits) {
    split_ids_[static_cast<int>(split)] = dataset_.ReadSplit(split);
  }
  const SamplingOptions& s = o.sampling;
  SeedOrder order;
  order.rank = s.rank;
  order.world_size = s.world_size;
  order.pad = false;  // the ranks' shares of a batch are one process's batch, no seed twice
  sampler_ = std::make_unique<NeighborSampler>(*graph_, split_ids(Split::kTrain), s.fanouts,
                                               s.batch_size, o.seed, budget_, o.threads, order);
  eval_sampler_ = std::make_unique<NeighborSampler>(
      *graph_, std::vector<uint64_t>{},
      s.eval_fanouts.empty() ? std::vector<int>(s.fanouts.size(), -1) : s.eval_fanouts,
      kEvalBatchSeeds, o.seed, budget_, o.threads);
  sampler_->set_labor(s.labor);
  eval_sampler_->set_labor(s.labor);
  OpenStore();
}

Session::~Session() = default;

const std::vector<uint64_t>& Session::split_ids(Split split) const {
  return split_ids_[static_cast<int>(split)];
}

void Session::OpenStore() {
  TrainingStoreOptions store;
  store.features = options_.features;
  store.io_depth = options_.io_depth;
  store.max_run_ahead = options_.max_run_ahead;
  store.hidden = options_.model.hidden;
  // Multistage training reads macro-batches, not the store: its budget goes to their
  // buffers, and the store, serving evaluation only, gets no cache.
  store.cache_rows = !options_.multistage.enabled();
  store_ =
      OpenTrainingStore(dataset_, *graph_, *sampler_, split_ids(Split::kTrain), store, budget_);
}

}  // namespace strata
