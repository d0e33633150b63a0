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
#include <vector>

#include "common/interrupt.h"
#include "minibatch/batch_history.h"
#include "minibatch/node_set.h"
#include "strata/block.h"
#include "strata/epoch_report.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"
#include "strata/row_buffer.h"

namespace strata {

struct ReadyBatch {
  SampledBatch batch;
  RowBuffer features;  // rows x dim, row-major: every input node's row, in order, unless partial
  uint64_t rows = 0;
  // With rows left out (BatchSource::LeaveOutRows): `features` holds the other input nodes'
  // rows only, and `gathered` their positions in input_nodes(), ascending.
  bool partial = false;
  std::vector<uint32_t> gathered;
  uint64_t macro_batch = 0;  // macro-batch sources: the one it was sampled in
  // Partition-based sampling: what the step exchanges with the historical embeddings.
  std::unique_ptr<BatchHistory> history;
  HeldCharge blocks_charge;  // the blocks' bytes, where the source charges them
};

class BatchStream {
 public:
  virtual ~BatchStream() = default;

  // The next batch of the epoch with its features; nullopt after the last one. While it
  // waits it calls `poll` every 100 ms, which may throw to abandon the wait (the trainer checks
  // for Ctrl-C there, the Python loader for Python's signals).
  virtual std::optional<ReadyBatch> Next(const std::function<void()>& poll) = 0;
  std::optional<ReadyBatch> Next() { return Next(ThrowIfInterrupted); }

  // What the stream's stages have done so far this epoch.
  virtual PipelineStats pipeline_stats() const = 0;
  // The feature store's counters as of the last batch handed on (zeros from a stream that
  // reads no rows through it), so measured from the stream's first report; callable from the
  // thread that calls Next while the stream's own threads work.
  virtual FeatureStoreStats store_stats() const = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;

  virtual uint64_t batches_per_epoch() const = 0;
  // Starts producing epoch `epoch`; destroying the stream stops its work.
  virtual std::unique_ptr<BatchStream> StartEpoch(uint64_t epoch) = 0;
  // Rows the consumer holds already (the Python loader's GPU cache), null for none: from the
  // next StartEpoch on, batches neither read nor hand out their features (ReadyBatch::partial).
  // The set must outlive the streams started while it is set.
  virtual void LeaveOutRows(const NodeSet* rows) = 0;
};

}  // namespace strata
