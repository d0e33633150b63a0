// NeighborLoader is the data loader of a training loop written elsewhere (the Python package's
// strata.NeighborLoader): the batches `strata train` would sample, each with its seeds' labels
// and its input features gathered through the same feature store, cache and pipeline, handed
// out one at a time.
//
// With split kTrain, the default SeedOrder and the same seed, fanouts and batch size, batch b
// of epoch e is the one `strata train` trains on (strata/neighbor_sampler.h); the store and
// the run-ahead never change a batch. With `multistage` enabled the batches are those of
// `strata train --multistage ...` instead: sampled inside macro-batches read whole (the
// training split only; with ranks, each a share of the macro-batches, MultistageOptions).
//
// Lifetime: a batch owns its arrays (charged to the loader's budget until it is destroyed) and
// must not outlive the loader. One epoch runs at a time; StartEpoch stops the previous one.
// Thread safety: one thread uses a loader at a time; its pipeline's threads are its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/block.h"
#include "strata/dataset.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"
#include "strata/neighbor_sampler.h"
#include "strata/row_buffer.h"
#include "strata/train.h"

namespace strata {

struct LoaderOptions {
  std::string dataset;
  std::vector<int> fanouts = {10, 10};  // input layer first; -1 = all neighbours
  uint64_t batch_size = 1000;
  Split split = Split::kTrain;
  SeedOrder order;
  LaborOptions labor;  // sampler="labor", batch_dependency=K
  uint64_t seed = 0;
  FeatureOptions features;
  MultistageOptions multistage;
  uint64_t memory_budget_bytes = uint64_t{1} << 30;
  uint32_t io_depth = 256;
  uint32_t max_run_ahead = 8;
  unsigned threads = 2;  // sampling threads within a batch
  // The consumer's hidden width: the direct store's cache is sized around the batches in
  // flight and about four times their features again in activations (minibatch/cache_sizing.h).
  uint64_t hidden = 128;
  // Batch features in one region allocated up front (the Python loader page-locks it for the
  // GPU once) instead of an array per batch: its size in bytes, or 0 with output_arena_batches
  // > 0 to size it from the widest of the first batches, for the run-ahead plus that many
  // batches held by the consumer, capped at half the budget left (at least the consumer's
  // batches and one more). Both 0: no region. While the consumer holds the whole region the
  // loader waits; Next then fails with an input error.
  uint64_t output_arena_bytes = 0;
  uint32_t output_arena_batches = 0;
};

class BatchHistory;

struct LoaderBatch {
  SampledBatch batch;           // seeds, blocks, input nodes
  RowBuffer features;           // input_nodes().size() x dim, row-major, unless partial
  std::vector<int64_t> labels;  // of the seeds, -1 for unlabelled
  // With rows left out (NeighborLoader::LeaveOutRows): `features` holds the rows of the other
  // input nodes only, and `gathered` their positions in input_nodes(), ascending.
  bool partial = false;
  std::vector<uint32_t> gathered;
  uint64_t feature_dim = 0;
  uint64_t macro_batch = 0;  // multistage loading: the macro-batch it was sampled in
  // Partition-based sampling: what the step exchanges with the historical embeddings (stale
  // rows in, fresh rows back: minibatch/batch_history.h). Released with the batch, which is
  // when the loader counts it trained.
  std::shared_ptr<BatchHistory> history;
};

// Partition-based sampling: a batch's exchange with the historical embeddings, per hidden
// layer (the input of model layer layer + 1): the input rows to take from `stale_rows` (one
// row of the hidden width each) and those whose fresh values to commit.
struct HistoryView {
  std::span<const uint32_t> stale;
  std::span<const float> stale_rows;
  std::span<const uint32_t> fresh;
  uint64_t width = 0;
};
size_t HistoryLayers(const LoaderBatch& batch);  // 0 without history
HistoryView HistoryOf(const LoaderBatch& batch, size_t layer);
// Hands back each hidden layer's fresh rows (fresh.size() rows of the hidden width, the
// activation without dropout); throws an input error when their number or shapes differ.
void CommitHistory(LoaderBatch& batch, const std::vector<std::span<const float>>& rows);

class NeighborLoader {
 public:
  // Opens the dataset, its topology, labels and split, the sampler and the store; input
  // errors (a missing dataset, fanouts that are not positive or -1, a budget too small) throw.
  explicit NeighborLoader(const LoaderOptions& options);
  ~NeighborLoader();
  NeighborLoader(const NeighborLoader&) = delete;
  NeighborLoader& operator=(const NeighborLoader&) = delete;

  const Dataset& dataset() const;
  // Exact for neighbour sampling; for multistage loading an estimate (how the training nodes
  // fall into macro-batches decides).
  uint64_t batches_per_epoch() const;
  uint64_t seeds_per_epoch() const;
  // Multistage loading: partitions (or mini-batches) per macro-batch; 0 otherwise.
  uint32_t macro_batch() const;

  // Starts sampling and gathering `epoch` ahead of Next.
  void StartEpoch(uint64_t epoch);
  // The epoch's next batch; nullopt after its last (or when no epoch was started). While it
  // waits for the pipeline it calls `poll` every 100 ms (when given); an exception from
  // `poll` propagates and leaves the epoch running.
  std::optional<LoaderBatch> Next(const std::function<void()>& poll = {});
  // Stops the running epoch's threads and releases what they hold.
  void StopEpoch();

  // The `count` nodes training is expected to read most, hottest first, as `policy` ranks them
  // (the static hot tier's ranking): what a cache on the consumer's side should hold.
  std::vector<uint64_t> HottestNodes(HotnessPolicy policy, uint64_t count) const;
  // A store to read rows outside the batches with (the loader's own belongs to its fetch thread
  // while an epoch runs): direct I/O without a cache, charged to the budget while it lives.
  // Open one for a run of GatherRows calls, not one per call.
  std::unique_ptr<FeatureStore> OpenRowReader() const;
  // The rows of `ids` as batches hand them out (row-normalised if the loader normalises), into
  // `out` (ids.size() x dim), read through `reader` (from OpenRowReader).
  void GatherRows(FeatureStore& reader, std::span<const uint64_t> ids, std::span<float> out) const;
  // Rows the consumer holds already (a GPU cache): from the next StartEpoch on, batches leave
  // them out of their features (LoaderBatch::partial). Empty: every row again. The set is
  // charged to the budget (a bit per node). Stops the running epoch.
  void LeaveOutRows(std::span<const uint64_t> ids);

  // The store's counters since the loader opened (zero for multistage loading, which reads
  // macro-batches instead).
  FeatureStoreStats store_stats() const;
  // What the current (or just finished) epoch has done so far: the batches handed out, the
  // time Next waited for them (stall_s) and the stream's stages (pipeline); zero before one.
  // The fields a loader reports are those EpochFields() marks `loader`.
  EpochReport epoch_stats() const;
  const MemoryBudget& budget() const;
  // The output region (see LoaderOptions::output_arena_bytes): its address and size, {nullptr,
  // 0} without one. Every batch's features lie inside it.
  std::pair<const std::byte*, uint64_t> output_arena() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace strata
