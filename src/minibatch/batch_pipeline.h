// BatchPipeline is the mini-batch path's BatchStream: it turns an epoch of sampled
// mini-batches into (batch, input features) pairs, in batch order, with sampling, disk reads
// and the consumer's compute overlapped:
//
//   sampler thread ──queue──► fetch thread ──queue──► Next() (the training step)
//
// The sampler thread samples batches ahead (each batch depends only on (seed, epoch, index),
// so running ahead never changes what is sampled). The fetch thread pins each sampled batch's
// input rows in the feature cache as soon as it sees it — the run-ahead batches are the
// cache's look-ahead window — and submits its gather; it keeps submitting further batches
// while fewer reads are in flight than the target (GIDS's storage access accumulator: enough
// outstanding reads to keep the device busy), bounded by the budget for batch features;
// it then waits for the oldest gather, unpins its rows and hands it on. The target comes
// from the StorageAccessAccumulator, which measures the device's rate and latency on the fly.
//
// Memory: with a batch reserve (the run's memory plan), batches take their blocks and
// features as BatchMemory (minibatch/batch_memory.h) says, so the pipeline never stops for
// memory; this needs a consumer that drops each batch before it asks for the next (the
// training loop).
//
// Invariants: batches come out in index order; at most max_run_ahead (≥ 1) batches are pinned
// or have a gather in flight at once (the queues around the fetch thread hold at most
// max_run_ahead sampled and one ready batch more); every feature matrix is charged to the
// budget or the reserve, and with a reserve every batch's blocks too; an error in any stage is
// rethrown by Next(). Stopping early — destruction or an error — waits for the gathers already
// submitted and releases every pin the pipeline holds.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/bounded_queue.h"
#include "minibatch/batch_memory.h"
#include "minibatch/batch_source.h"
#include "minibatch/storage_access_accumulator.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"
#include "strata/neighbor_sampler.h"
#include "strata/row_buffer.h"

namespace strata {

struct PipelineOptions {
  uint64_t epoch = 0;
  uint64_t first_batch = 0;            // to resume mid-epoch
  uint32_t max_run_ahead = 8;          // batches sampled but not yet consumed
  uint64_t max_reads_in_flight = 256;  // the engine's queue depth: the least reads queued
  // Where batch features go: this region (the Python loader's pinned buffers) when given,
  // waiting for room while the consumer holds it; otherwise arrays charged to the budget.
  HostArena* output_arena = nullptr;
  // Rows the consumer holds already: not read, left out of the batches' features.
  const NodeSet* left_out = nullptr;
  // The memory plan's reserve for the oldest batches (see above); without one, the oldest
  // batch's features are charged to the budget whatever it has free, and blocks not at all.
  MemoryBudget* batch_reserve = nullptr;
};

class BatchPipeline final : public BatchStream {
 public:
  BatchPipeline(const NeighborSampler& sampler, FeatureStore& store, const PipelineOptions& options,
                MemoryBudget& budget);
  ~BatchPipeline() override;
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  using BatchStream::Next;
  std::optional<ReadyBatch> Next(const std::function<void()>& poll) override;

  PipelineStats pipeline_stats() const override;
  // Safe to call from any thread while the fetch thread works (the store itself may only be
  // touched by that thread).
  FeatureStoreStats store_stats() const override;

 private:
  void SampleLoop();
  void FetchLoop();

  const NeighborSampler& sampler_;
  FeatureStore& store_;
  PipelineOptions options_;
  MemoryBudget& budget_;
  BoundedQueue<ReadyBatch> sampled_;  // the batch and its blocks' charge, no features yet
  BoundedQueue<ReadyBatch> ready_;
  std::atomic<bool> stopping_{false};
  std::optional<BatchMemory> memory_;  // with a batch reserve
  std::atomic<uint64_t> sample_ns_{0}, fetch_ns_{0}, fetch_wait_ns_{0}, max_in_flight_{0};
  std::atomic<uint64_t> target_{0};
  std::atomic<double> peak_iops_{0}, latency_us_{0};
  mutable std::mutex stats_mutex_;
  FeatureStoreStats store_stats_;
  std::thread sampler_thread_;
  std::thread fetch_thread_;
};

// The mini-batch path's BatchSource: a BatchPipeline per epoch over a neighbour sampler and a
// feature store, both of which must outlive it.
class NeighborBatchSource final : public BatchSource {
 public:
  // `options.epoch` and `options.first_batch` are set per epoch.
  NeighborBatchSource(const NeighborSampler& sampler, FeatureStore& store,
                      const PipelineOptions& options, MemoryBudget& budget)
      : sampler_(sampler), store_(store), options_(options), budget_(budget) {}

  uint64_t batches_per_epoch() const override { return sampler_.batches_per_epoch(); }
  std::unique_ptr<BatchStream> StartEpoch(uint64_t epoch) override {
    PipelineOptions options = options_;
    options.epoch = epoch;
    options.first_batch = 0;
    return std::make_unique<BatchPipeline>(sampler_, store_, options, budget_);
  }
  void LeaveOutRows(const NodeSet* rows) override { options_.left_out = rows; }

 private:
  const NeighborSampler& sampler_;
  FeatureStore& store_;
  PipelineOptions options_;
  MemoryBudget& budget_;
};

}  // namespace strata
