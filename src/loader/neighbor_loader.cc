#include "strata/neighbor_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/clock.h"
#include "common/host_arena.h"
#include "common/interrupt.h"
#include "features/row_normalize.h"
#include "minibatch/batch_history.h"
#include "minibatch/batch_pipeline.h"
#include "minibatch/node_set.h"
#include "minibatch/training_store.h"
#include "multistage/macro_batch_source.h"
#include "multistage/multistage_options.h"
#include "strata/error.h"
#include "strata/graph.h"

namespace strata {
namespace {

// The run a multistage source is built for: the loader's sampling, seed and budget options.
TrainOptions MultistageRunOf(const LoaderOptions& o) {
  TrainOptions run;
  run.dataset = o.dataset;
  run.sampling.fanouts = o.fanouts;
  run.sampling.batch_size = o.batch_size;
  run.sampling.labor = o.labor;
  run.features = o.features;
  run.multistage = o.multistage;
  run.multistage.rank = o.order.rank;
  run.multistage.world_size = o.order.world_size;
  // PBS's history rows: one per hidden layer of a GraphSAGE of `hidden` and the fanouts' layers.
  run.model.layers = o.fanouts.size();
  run.model.hidden = o.hidden;
  run.seed = o.seed;
  run.memory_budget_bytes = o.memory_budget_bytes;
  run.io_depth = o.io_depth;
  run.max_run_ahead = o.max_run_ahead;
  run.threads = o.threads;
  return run;
}

// How long the fetch thread may wait for room in the output region while Next waits for it
// before Next calls it a deadlock: the consumer then holds the whole region.
constexpr uint64_t kArenaHeldNs = 1'000'000'000;

// The output region's size: as asked, or room for the run-ahead plus the batches the consumer
// holds, at the widest of the first batches (up to 8) plus an eighth, but no more than half of
// what the budget has left (the run-ahead then shrinks to what fits) and no less than room for
// the consumer's batches and one more.
uint64_t OutputArenaBytes(const LoaderOptions& o, const NeighborSampler& sampler, uint64_t dim,
                          uint64_t available_bytes) {
  if (o.output_arena_bytes > 0) return o.output_arena_bytes;
  uint64_t widest = 0;
  for (uint64_t b = 0; b < std::min<uint64_t>(sampler.batches_per_epoch(), 8); ++b) {
    widest = std::max<uint64_t>(widest, sampler.Sample(0, b).input_nodes().size());
  }
  const uint64_t batch_bytes = widest * dim * sizeof(float) / 8 * 9;
  const uint64_t wanted = (o.max_run_ahead + 1 + o.output_arena_batches) * batch_bytes;
  const uint64_t least = (o.output_arena_batches + 1) * batch_bytes;
  return std::max(least, std::min(wanted, available_bytes / 2));
}

}  // namespace

// Members are destroyed in reverse order: the stream before the source and store it reads,
// everything before the budget it is charged to.
struct NeighborLoader::State {
  LoaderOptions options;
  MemoryBudget budget;
  Dataset dataset;
  std::unique_ptr<CscGraph> graph;
  ChargedArray<int32_t> labels;  // empty when the dataset has none
  std::unique_ptr<NeighborSampler> sampler;
  std::unique_ptr<HostArena> arena;     // the output region, when asked for
  std::vector<uint64_t> seeds;          // the split's
  std::unique_ptr<NodeSet> left_out;    // rows the consumer holds
  std::unique_ptr<FeatureStore> store;  // neighbour sampling only
  std::unique_ptr<BatchSource> source;
  std::unique_ptr<BatchStream> stream;
  EpochReport epoch;  // the current epoch's steps and waits; its stages are the stream's

  State(const LoaderOptions& o, Dataset opened)
      : options(o), budget(o.memory_budget_bytes), dataset(std::move(opened)) {}
};

NeighborLoader::NeighborLoader(const LoaderOptions& o)
    : state_(std::make_unique<State>(o, Dataset::Open(o.dataset))) {
  State& s = *state_;
  const DatasetMeta& meta = s.dataset.meta();
  if (meta.feature_dim == 0) throw Error::Input("dataset has no features", s.dataset.dir());
  if (o.max_run_ahead == 0) throw Error::Input("run_ahead must be positive");
  if (o.multistage.enabled()) {
    if (o.split != Split::kTrain) throw Error::Input("multistage loading serves the train split");
    CheckMultistageOptions(MultistageRunOf(o).multistage, o.fanouts.size());
  }
  TopologyOptions topology = {TopologyPlacement::kAuto, -1, {}};
  topology.io.depth = o.io_depth;
  s.graph = std::make_unique<CscGraph>(s.dataset, s.budget, topology);
  if (meta.num_classes > 0) s.labels = s.dataset.ReadLabels(s.budget);
  s.seeds = s.dataset.ReadSplit(o.split);
  const std::vector<uint64_t>& seeds = s.seeds;
  s.sampler = std::make_unique<NeighborSampler>(*s.graph, seeds, o.fanouts, o.batch_size, o.seed,
                                                s.budget, o.threads, o.order);
  s.sampler->set_labor(o.labor);
  // Before the store, whose cache takes a share of what the budget has left.
  if (o.output_arena_bytes > 0 || o.output_arena_batches > 0) {
    s.arena = std::make_unique<HostArena>(
        s.budget, OutputArenaBytes(o, *s.sampler, meta.feature_dim, s.budget.available()),
        "pinned batch buffers");
  }
  if (o.multistage.enabled()) {
    s.source = std::make_unique<MacroBatchSource>(s.dataset, *s.graph, seeds, MultistageRunOf(o),
                                                  s.budget, s.arena.get());
    return;
  }
  TrainingStoreOptions store;
  store.features = o.features;
  store.io_depth = o.io_depth;
  store.max_run_ahead = o.max_run_ahead;
  s.store = OpenTrainingStore(s.dataset, *s.graph, *s.sampler, seeds, store, s.budget);
  PipelineOptions pipeline;
  pipeline.max_run_ahead = o.max_run_ahead;
  pipeline.max_reads_in_flight = o.io_depth;
  pipeline.output_arena = s.arena.get();
  s.source = std::make_unique<NeighborBatchSource>(*s.sampler, *s.store, pipeline, s.budget);
}

// The state's members stop the stream first.
NeighborLoader::~NeighborLoader() = default;

const Dataset& NeighborLoader::dataset() const { return state_->dataset; }
uint64_t NeighborLoader::batches_per_epoch() const { return state_->source->batches_per_epoch(); }
uint64_t NeighborLoader::seeds_per_epoch() const { return state_->sampler->seeds_per_epoch(); }
const MemoryBudget& NeighborLoader::budget() const { return state_->budget; }

std::pair<const std::byte*, uint64_t> NeighborLoader::output_arena() const {
  if (!state_->arena) return {nullptr, 0};
  return {state_->arena->base(), state_->arena->size_bytes()};
}

uint32_t NeighborLoader::macro_batch() const {
  const auto* macro = dynamic_cast<const MacroBatchSource*>(state_->source.get());
  return macro == nullptr ? 0 : macro->macro_batch();
}

void NeighborLoader::StartEpoch(uint64_t epoch) {
  StopEpoch();
  state_->stream = state_->source->StartEpoch(epoch);
  state_->epoch = EpochReport{};
  state_->epoch.epoch = epoch;
}

void NeighborLoader::StopEpoch() { state_->stream.reset(); }

std::vector<uint64_t> NeighborLoader::HottestNodes(HotnessPolicy policy, uint64_t count) const {
  const State& s = *state_;
  count = std::min<uint64_t>(count, s.dataset.meta().num_nodes);
  return strata::HottestNodes(*s.graph, *s.sampler, s.seeds, policy, count, state_->budget);
}

std::unique_ptr<FeatureStore> NeighborLoader::OpenRowReader() const {
  return OpenFeatureStore(state_->dataset, FeatureStoreKind::kDirect, {}, state_->budget);
}

void NeighborLoader::GatherRows(FeatureStore& reader, std::span<const uint64_t> ids,
                                std::span<float> out) const {
  const uint64_t dim = state_->dataset.meta().feature_dim;
  if (out.size() != ids.size() * dim) throw Error::Input("GatherRows: out must be ids x dim");
  reader.Gather(ids, out);
  if (state_->options.features.row_normalize) NormalizeRows(out, dim);
}

void NeighborLoader::LeaveOutRows(std::span<const uint64_t> ids) {
  State& s = *state_;
  StopEpoch();  // its stream reads the set
  s.source->LeaveOutRows(nullptr);
  s.left_out.reset();
  if (ids.empty()) return;
  const uint64_t n = s.dataset.meta().num_nodes;
  auto rows = std::make_unique<NodeSet>(n, s.budget, "rows the consumer holds");
  for (uint64_t id : ids) {
    if (id >= n) throw Error::Input(fmt::format("node {} is not below the {} nodes", id, n));
    rows->Insert(id);
  }
  s.left_out = std::move(rows);
  s.source->LeaveOutRows(s.left_out.get());
}

std::optional<LoaderBatch> NeighborLoader::Next(const std::function<void()>& poll) {
  State& s = *state_;
  if (!s.stream) return std::nullopt;
  // A finished stream stays until the next epoch, for epoch_stats().
  const uint64_t wait_start = MonotonicNs();
  const std::function<void()> check = [&] {
    if (poll) {
      poll();
    } else {
      ThrowIfInterrupted();
    }
    if (s.arena && s.arena->blocked_ns() > kArenaHeldNs) {
      throw Error::Input(fmt::format(
          "the loader's {:.0f} MiB of pinned batch buffers are all held by batches still "
          "referenced; drop old batches, or give the loader more (pinned_memory=)",
          s.arena->size_bytes() / 1048576.0));
    }
  };
  std::optional<ReadyBatch> ready = s.stream->Next(check);
  s.epoch.stall_s += (MonotonicNs() - wait_start) * 1e-9;
  if (!ready) return std::nullopt;
  ++s.epoch.batches;
  LoaderBatch out;
  out.batch = std::move(ready->batch);
  out.features = std::move(ready->features);
  out.macro_batch = ready->macro_batch;
  out.partial = ready->partial;
  out.gathered = std::move(ready->gathered);
  out.history = std::move(ready->history);
  const uint64_t dim = s.dataset.meta().feature_dim;
  out.feature_dim = dim;
  if (s.options.features.row_normalize) {
    NormalizeRows({out.features.data(), out.features.size()}, dim);
  }
  const Block& last = out.batch.blocks.back();
  out.labels.resize(last.num_dst());
  for (uint32_t i = 0; i < last.num_dst(); ++i) {
    out.labels[i] = s.labels.size() == 0 ? -1 : s.labels[last.src_nodes[i]];
  }
  return out;
}

size_t HistoryLayers(const LoaderBatch& batch) {
  return batch.history ? batch.history->layers.size() : 0;
}

HistoryView HistoryOf(const LoaderBatch& batch, size_t layer) {
  if (layer >= HistoryLayers(batch)) throw Error::Internal("no such hidden layer");
  const HiddenHistory<float>& h = batch.history->layers[layer];
  return {h.stale, h.stale_rows, h.fresh, batch.history->width};
}

void CommitHistory(LoaderBatch& batch, const std::vector<std::span<const float>>& rows) {
  if (!batch.history) return;
  if (rows.size() != batch.history->layers.size()) {
    throw Error::Input(fmt::format("commit_history takes {} arrays, one per hidden layer, not {}",
                                   batch.history->layers.size(), rows.size()));
  }
  for (size_t l = 0; l < rows.size(); ++l) {
    HiddenHistory<float>& h = batch.history->layers[l];
    if (rows[l].size() != h.fresh.size() * batch.history->width) {
      throw Error::Input(fmt::format("commit_history: hidden layer {} needs {} fresh rows of {}", l,
                                     h.fresh.size(), batch.history->width));
    }
    h.fresh_rows.assign(rows[l].begin(), rows[l].end());
  }
  batch.history->Commit();
}

FeatureStoreStats NeighborLoader::store_stats() const {
  // While an epoch runs the store belongs to its fetch thread; the stream keeps a copy.
  if (state_->stream) return state_->stream->store_stats();
  return state_->store ? state_->store->stats() : FeatureStoreStats{};
}

EpochReport NeighborLoader::epoch_stats() const {
  if (!state_->stream) return {};
  EpochReport report = state_->epoch;
  report.pipeline = state_->stream->pipeline_stats();
  return report;
}

}  // namespace strata
