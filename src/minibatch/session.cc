#include "minibatch/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "features/direct_feature_store.h"
#include "fullgraph/full_graph_plan.h"
#include "minibatch/batch_bound.h"
#include "minibatch/layerwise_inference.h"
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

// Partition-based multistage batches are sampled inside their macro-batches, and layer-wise
// evaluation streams the lists in order: then nothing reads the graph's lists at random, and an
// adjacency cache would only take budget from the hub section and the evaluation's passes.
bool SamplesWholeGraph(const TrainOptions& o) {
  const MultistageMethod method = o.multistage.method;
  const bool in_macro_batches =
      method == MultistageMethod::kPartition || method == MultistageMethod::kPbs;
  return !in_macro_batches || o.eval == EvalMode::kSampled;
}

TopologyOptions TopologyOf(const TrainOptions& o) {
  TopologyOptions topology = o.topology;
  topology.io.depth = o.io_depth;
  if (topology.adjacency_cache_bytes < 0 && !SamplesWholeGraph(o)) {
    topology.adjacency_cache_bytes = 0;
  }
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
  if (o.model.kind == ModelKind::kMlp) {
    auto reads_neighbours = [](const std::vector<int>& f) {
      return std::any_of(f.begin(), f.end(), [](int x) { return x != 0; });
    };
    if (o.full_graph || o.multistage.method != MultistageMethod::kNone) {
      throw Error::Input("--model mlp reads no neighbours: it trains on mini-batches only");
    }
    if (reads_neighbours(o.sampling.fanouts) || reads_neighbours(o.sampling.eval_fanouts)) {
      throw Error::Input("--model mlp reads no neighbours: its fanouts are 0");
    }
  }
  if (!o.sampling.eval_fanouts.empty() && o.eval == EvalMode::kLayerwise) {
    throw Error::Input(
        "--eval-fanouts samples evaluation neighbourhoods; layer-wise evaluation uses full ones");
  }
  if (o.patience > 0 && (o.eval == EvalMode::kNone || o.eval_every == 0)) {
    throw Error::Input(
        "--patience counts epochs since the best validation accuracy: it needs --eval-every of "
        "1 or more and --eval sampled or layerwise");
  }
  if (!(o.time_limit_s >= 0)) throw Error::Input("--time-limit must be 0 or more seconds");
  if (o.sampling.batch_size == 0) throw Error::Input("--batch-size must be positive");
  if (o.sampling.batch_pieces == 0 || o.sampling.batch_pieces > o.sampling.batch_size) {
    throw Error::Input(
        fmt::format("--batch-pieces must be from 1 to the batch size ({})", o.sampling.batch_size));
  }
  if (o.max_batches % o.sampling.batch_pieces != 0) {
    throw Error::Input(fmt::format(
        "--max-batches counts pieces: give a multiple of --batch-pieces ({}), so that the epoch "
        "ends with a whole batch's step",
        o.sampling.batch_pieces));
  }
  if (o.full_graph && o.sampling.batch_pieces > 1) {
    throw Error::Input("--batch-pieces splits sampled batches; --full-graph samples none");
  }
  if (o.max_run_ahead == 0) throw Error::Input("--run-ahead must be positive");
  CheckModelOptions(o.model);
  if (!(o.optimizer.lr > 0)) throw Error::Input("--lr must be positive");
}

Session::Session(const TrainOptions& o, Dataset dataset, bool training,
                 const SourceNeeds& source_needs)
    : options_(o), budget_(o.memory_budget_bytes), dataset_(std::move(dataset)) {
  const DatasetMeta& meta = dataset_.meta();
  if (meta.num_classes == 0) throw Error::Input("dataset has no labels", dataset_.dir());
  if (meta.feature_dim == 0) throw Error::Input("dataset has no features", dataset_.dir());
  graph_ = std::make_unique<CscGraph>(dataset_, budget_, TopologyOf(o));
  ChargedArray<int32_t> labels = dataset_.ReadLabels(budget_);
  for (Split split : kAllSplits) {
    split_ids_[static_cast<int>(split)] = dataset_.ReadSplit(split);
  }
  const SamplingOptions& s = o.sampling;
  SeedOrder order;
  order.rank = s.rank;
  order.world_size = s.world_size;
  order.pad = false;  // the ranks' shares of a batch are one process's batch, no seed twice
  order.pieces = s.batch_pieces;
  sampler_ = std::make_unique<NeighborSampler>(*graph_, split_ids(Split::kTrain), s.fanouts,
                                               s.batch_size, o.seed, budget_, o.threads, order);
  eval_sampler_ = std::make_unique<NeighborSampler>(*graph_, std::vector<uint64_t>{},
                                                    EvalFanouts(o.sampling, o.model.kind),
                                                    kEvalBatchSeeds, o.seed, budget_, o.threads);
  sampler_->set_labor(s.labor);
  eval_sampler_->set_labor(s.labor);
  const ModelConfig config = ModelConfigOf(o, meta);
  // Layer-wise evaluation is sized beside the rest, before the model and the store's cache:
  // the budget the plan refuses names what evaluation needs too, and the cache leaves it room.
  std::vector<LayerwiseNeeds> evaluations;
  uint64_t evaluation_least = 0;
  if (training && o.eval == EvalMode::kLayerwise) {
    for (Split split : {Split::kVal, Split::kTest}) {
      evaluations.push_back(
          SizeLayerwise(*this, config, split_ids(split), LayerwiseOptionsOf(*this)));
      evaluation_least = std::max(evaluation_least, evaluations.back().least_bytes());
    }
  }
  PlanMemory(config, training, evaluation_least, source_needs);
  model_ =
      std::make_unique<MiniBatchModel>(config, *graph_, std::move(labels), o.features.row_normalize,
                                       o.sampling.batch_pieces, plan_.model_bytes, budget_);
  const uint64_t keep_free = plan_.later_bytes + StoreBytes();
  const uint64_t evaluation_room = budget_.available() - std::min(budget_.available(), keep_free);
  for (LayerwiseNeeds& evaluation : evaluations) {
    layerwise_bytes_ = std::max(layerwise_bytes_, evaluation.NeededBytes(evaluation_room));
  }
  OpenStore();
}

uint64_t Session::StoreBytes() const {
  const DatasetMeta& meta = dataset_.meta();
  switch (options_.features.store) {
    case FeatureStoreKind::kDirect:
      return DirectStoreReadBytes(meta, options_.io_depth, options_.features.max_read_bytes);
    case FeatureStoreKind::kMemory:
      return meta.num_nodes * meta.row_stride_bytes;
    case FeatureStoreKind::kMmap:
      return 0;  // its pages are the page cache's
  }
  return 0;
}

void Session::PlanMemory(const ModelConfig& config, bool training, uint64_t evaluation_bytes,
                         const SourceNeeds& source_needs) {
  const DatasetMeta& meta = dataset_.meta();
  MiniBatchMemoryInputs in;
  const DegreeProfile degrees(*graph_);
  in.degrees = &degrees;
  in.model = config;
  in.optimizer = options_.optimizer.kind;
  in.sampling = &options_.sampling;
  in.labor = options_.sampling.labor.enabled;
  in.training = training;
  in.sampled_eval = options_.eval != EvalMode::kNone && options_.eval != EvalMode::kLayerwise;
  in.train_ids = split_ids(Split::kTrain).size();
  // Charged once the plan is made: the GCN normalisation and the store's buffers.
  in.fixed_bytes = (config.kind == ModelKind::kGcn ? meta.num_nodes * sizeof(float) : 0) +
                   StoreBytes() + evaluation_bytes;
  if (training && source_needs) {
    // Whole batches, not pieces: LBS's first stage samples whole mini-batches.
    const SamplingOptions& s = options_.sampling;
    in.fixed_bytes += source_needs(dataset_, *graph_,
                                   BoundBatch(degrees, s.fanouts, s.batch_size, s.labor.enabled));
  }
  in.available_bytes = budget_.available();
  plan_ = PlanMiniBatchMemory(in);
  CheckPlanFits(plan_, budget_);
  budget_.Charge(plan_.optimizer_bytes, "the optimizer's state");
  optimizer_charge_ = HeldCharge(budget_, plan_.optimizer_bytes);
  budget_.Charge(plan_.batch_reserve_bytes, "batches in flight");
  batch_reserve_charge_ = HeldCharge(budget_, plan_.batch_reserve_bytes);
  batch_reserve_ = std::make_unique<MemoryBudget>(plan_.batch_reserve_bytes);
}

Session::~Session() = default;

void Session::LendTrainingMemory() {
  if (batch_reserve_->used() != 0) {
    throw Error::Internal("the batch reserve was lent while a batch held part of it");
  }
  batch_reserve_charge_.Reset();
  model_->LendUnusedPlan();
}

void Session::ReclaimTrainingMemory() {
  model_->ReclaimPlan();
  if (!budget_.TryCharge(plan_.batch_reserve_bytes)) {
    throw Error::Internal("a charge made while the batch reserve was lent outlived the loan");
  }
  batch_reserve_charge_ = HeldCharge(budget_, plan_.batch_reserve_bytes);
}

const std::vector<uint64_t>& Session::split_ids(Split split) const {
  return split_ids_[static_cast<int>(split)];
}

void Session::OpenStore() {
  TrainingStoreOptions store;
  store.features = options_.features;
  store.io_depth = options_.io_depth;
  store.max_run_ahead = options_.max_run_ahead;
  store.reserved_batches = kReservedBatches;
  store.leave_bytes = plan_.later_bytes + layerwise_bytes_;
  // Multistage training reads macro-batches, not the store: its budget goes to their
  // buffers, and the store, serving evaluation only, gets no cache.
  store.cache_rows = !options_.multistage.enabled();
  store_ =
      OpenTrainingStore(dataset_, *graph_, *sampler_, split_ids(Split::kTrain), store, budget_);
}

}  // namespace strata
