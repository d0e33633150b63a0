// BatchPipeline turns an epoch of sampled mini-batches into (batch, input features) pairs,
// in batch order, with sampling, disk reads and the consumer's compute overlapped:
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
// Invariants: batches come out in index order; at most max_run_ahead batches are between
// the sampler and Next(); their feature matrices are charged to the budget; an error in any
// stage is rethrown by Next().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "sampling/block.h"
#include "sampling/neighbor_sampler.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"
#include "train/bounded_queue.h"
#include "train/storage_access_accumulator.h"

namespace strata {

struct PipelineOptions {
  uint64_t epoch = 0;
  uint64_t first_batch = 0;            // to resume mid-epoch
  uint32_t max_run_ahead = 8;          // batches sampled but not yet consumed
  uint64_t max_reads_in_flight = 256;  // the engine's queue depth: the least reads queued
};

// Seconds each stage spent working (not waiting), for the epoch report.
struct StageBusy {
  double sample_s = 0;
  double fetch_s = 0;  // planning, submitting and decoding; waits for the disk excluded
  double fetch_wait_s = 0;
  uint64_t max_batches_in_flight = 0;
  uint64_t reads_in_flight_target = 0;  // the accumulator's last target
  double peak_iops = 0;                 // what the accumulator measured
  double read_latency_us = 0;
};

struct ReadyBatch {
  SampledBatch batch;
  ChargedArray<float> features;  // input_nodes().size() x dim, row-major
  uint64_t rows = 0;
};

class BatchPipeline {
 public:
  BatchPipeline(const NeighborSampler& sampler, FeatureStore& store, const PipelineOptions& options,
                MemoryBudget& budget);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // The next batch of the epoch with its features; nullopt after the last one.
  std::optional<ReadyBatch> Next();

  StageBusy busy() const;
  // The store's counters as of the last batch handed on; safe to call from any thread while
  // the fetch thread works (the store itself may only be touched by that thread).
  FeatureStoreStats store_stats() const;

 private:
  void SampleLoop();
  void FetchLoop();

  const NeighborSampler& sampler_;
  FeatureStore& store_;
  PipelineOptions options_;
  MemoryBudget& budget_;
  BoundedQueue<SampledBatch> sampled_;
  BoundedQueue<ReadyBatch> ready_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sample_ns_{0}, fetch_ns_{0}, fetch_wait_ns_{0}, max_in_flight_{0};
  std::atomic<uint64_t> target_{0};
  std::atomic<double> peak_iops_{0}, latency_us_{0};
  mutable std::mutex stats_mutex_;
  FeatureStoreStats store_stats_;
  std::thread sampler_thread_;
  std::thread fetch_thread_;
};

}  // namespace strata
