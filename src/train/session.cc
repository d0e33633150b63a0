#include "train/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "graph/hotness.h"
#include "strata/error.h"
#include "train/cache_sizing.h"

namespace strata {
namespace {

constexpr uint64_t kPresampleBatches = 32;
constexpr uint64_t kPresampleEpoch = uint64_t{1} << 40;  // a stream training never samples

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
  if (layers == 0 || o.sampling.fanouts.size() != layers) {
    throw Error::Input(fmt::format("--fanouts lists {} layers, --layers is {}",
                                   o.sampling.fanouts.size(), layers));
  }
  if (!o.sampling.eval_fanouts.empty() && o.sampling.eval_fanouts.size() != layers) {
    throw Error::Input("--eval-fanouts must list one fanout per layer");
  }
  if (o.sampling.batch_size == 0) throw Error::Input("--batch-size must be positive");
  if (o.max_run_ahead == 0) throw Error::Input("--run-ahead must be positive");
  if (!o.multistage.fanouts.empty() && o.multistage.fanouts.size() != layers) {
    throw Error::Input("--macro-fanouts must list one fanout per layer");
  }
  if (o.multistage.reuse < 1 || o.multistage.reuse > 4) {
    throw Error::Input("--reuse must be between 1 and 4");
  }
  if (o.model.hidden == 0) throw Error::Input("--hidden must be positive");
  if (!(o.optimizer.lr > 0)) throw Error::Input("--lr must be positive");
  if (!(o.model.dropout >= 0 && o.model.dropout < 1)) {
    throw Error::Input("--dropout must be in [0, 1)");
  }
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
  sampler_ = std::make_unique<NeighborSampler>(*graph_, split_ids(Split::kTrain), s.fanouts,
                                               s.batch_size, o.seed, budget_, o.threads);
  eval_sampler_ = std::make_unique<NeighborSampler>(
      *graph_, std::vector<uint64_t>{},
      s.eval_fanouts.empty() ? std::vector<int>(s.fanouts.size(), -1) : s.eval_fanouts,
      kEvalBatchSeeds, o.seed, budget_, o.threads);
  OpenStore();
}

Session::~Session() = default;

const std::vector<uint64_t>& Session::split_ids(Split split) const {
  return split_ids_[static_cast<int>(split)];
}

void Session::OpenStore() {
  const FeatureOptions& f = options_.features;
  DirectStoreOptions direct;
  direct.io.depth = options_.io_depth;
  direct.max_read_bytes = f.max_read_bytes;
  direct.policy = f.cache_policy;
  if (f.store == FeatureStoreKind::kDirect) {
    const DatasetMeta& meta = dataset_.meta();
    CacheSizingInputs in;
    for (uint64_t b = 0; b < std::min<uint64_t>(3, sampler_->batches_per_epoch()); ++b) {
      in.widest_batch_rows =
          std::max<uint64_t>(in.widest_batch_rows, sampler_->Sample(0, b).input_nodes().size());
    }
    in.num_nodes = meta.num_nodes;
    in.feature_dim = meta.feature_dim;
    in.row_bytes = meta.feature_dim * FeatureDtypeBytes(meta.feature_dtype);
    in.hidden = options_.model.hidden;
    in.max_run_ahead = options_.max_run_ahead;
    in.io_depth = options_.io_depth;
    in.max_read_bytes = f.max_read_bytes;
    // Multistage training reads macro-batches, not the store: its budget goes to their
    // buffers, and the store, serving evaluation only, gets no cache.
    in.cache_fraction = options_.multistage.enabled() ? 0 : f.cache_fraction;
    in.hot_share = f.hot_share;
    in.available_bytes = budget_.available();
    const CacheSizes sizes = SizeFeatureCache(in);
    direct.dynamic_rows = sizes.dynamic_rows;
    direct.max_pinned_ids = sizes.max_pinned_ids;
    if (sizes.hot_rows > 0) direct.hot_ids = HotIds(sizes.hot_rows);
  }
  store_ = OpenFeatureStore(dataset_, f.store, direct, budget_);
}

std::vector<uint64_t> Session::HotIds(uint64_t count) {
  const uint64_t presample_batches = std::min(kPresampleBatches, sampler_->batches_per_epoch());
  ChargedArray<float> scores = HotnessScores(
      options_.features.hot_policy, *graph_, split_ids(Split::kTrain),
      [&](uint64_t b) { return sampler_->Sample(kPresampleEpoch, b).input_nodes(); },
      presample_batches, budget_);
  return TopScored(scores, count, budget_);
}

}  // namespace strata
