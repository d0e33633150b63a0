// BatchSource is "what produces batches" for a training path: one BatchStream per epoch,
// yielding the epoch's batches in order, each with its input features gathered. The
// mini-batch path's source samples neighbourhoods and gathers rows through the feature store
// (NeighborBatchSource in minibatch/batch_pipeline.h); a macro-batch path reads partitions
// sequentially and samples inside them, behind the same interface, so the epoch that
// consumes the batches (MiniBatchRunner) does not change.
//
// Invariants every source keeps: batch b of epoch e is the same whatever the run-ahead or the
// store; a stream's batches come out in index order; the feature matrices handed out are
// charged to the budget for as long as they live; an error in any stage is rethrown by Next.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "common/interrupt.h"
#include "strata/block.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"

namespace strata {

struct ReadyBatch {
  SampledBatch batch;
  ChargedArray<float> features;  // input_nodes().size() x dim, row-major
  uint64_t rows = 0;
  uint64_t macro_batch = 0;  // macro-batch sources: the one it was sampled in
};

// Seconds each stage of a stream spent working (not waiting), for the epoch report.
struct StageBusy {
  double sample_s = 0;
  double fetch_s = 0;       // pinning, planning and submitting gathers
  double fetch_wait_s = 0;  // in Wait: reads still in flight, and decoding their completions
  uint64_t max_batches_in_flight = 0;
  uint64_t reads_in_flight_target = 0;  // the storage access accumulator's last target
  double peak_iops = 0;                 // what the accumulator measured
  double read_latency_us = 0;
  // Macro-batch sources only.
  uint64_t macro_batches_planned = 0;  // in the epoch
  uint64_t macro_batches = 0;          // every pass sampled
  uint64_t macro_passes = 0;
  uint64_t load_bytes = 0;
  double load_s = 0;
  double stall_s = 0;
};

class BatchStream {
 public:
  virtual ~BatchStream() = default;

  // The next batch of the epoch with its features; nullopt after the last one. While it
  // waits it calls `poll` every 100 ms, which may throw to abandon the wait (the trainer checks
  // for Ctrl-C there, the Python loader for Python's signals).
  virtual std::optional<ReadyBatch> Next(const std::function<void()>& poll) = 0;
  std::optional<ReadyBatch> Next() { return Next(ThrowIfInterrupted); }

  virtual StageBusy busy() const = 0;
  // The feature store's counters as of the last batch handed on; callable from the thread
  // that calls Next while the stream's own threads work.
  virtual FeatureStoreStats store_stats() const = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;

  virtual uint64_t batches_per_epoch() const = 0;
  // Starts producing epoch `epoch`; destroying the stream stops its work.
  virtual std::unique_ptr<BatchStream> StartEpoch(uint64_t epoch) = 0;
};

}  // namespace strata
