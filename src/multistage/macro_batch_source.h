// MacroBatchSource is the multistage path's BatchSource (Hanoi: T. Huang, "Efficient Systems
// for Large-Scale Graph Representation Learning", MIT PhD thesis, 2025, §4.2, Fig. 4.3): each
// macro-batch of an epoch is loaded into one of two buffers by a loader thread (a
// MacroBatchLoader: partitions, or a large-batch sample) while a producer thread samples the
// mini-batches of the other with the ordinary neighbour sampler restricted to the macro-batch
// graph, gathers their rows from memory, and queues them for Next():
//
//   loader thread ──(2 buffers)──► producer thread ──queue──► Next() (the training step)
//
// Each macro-batch is iterated `reuse` times (macro-batch reuse, at most 4 passes); with
// adaptive reuse, up to `reuse` times, a pass repeated only while the loader is still reading
// the next macro-batch (the thesis's reuse: training instead of stalling).
//
// Ahead of time (MultistageOptions::ahead_of_time, and always for PBS's halo) the loader thread
// samples a macro-batch's mini-batches as soon as its graph is built and the loader reads only
// the rows they use; the producer then hands out those batches. With PBS the loader writes a
// macro-batch's history back only once all its batches are released (trained, or dropped):
// a consumer must not hold more than a macro-batch's worth of them.
//
// Determinism: macro-batch m depends on (seed, epoch, m), batch b of its pass r on (seed, epoch,
// m, r, b) only, and unless reuse is adaptive the number of passes is fixed, so neither timing
// nor thread counts change the batches. Batches come out with global node ids, like the
// mini-batch path's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "minibatch/batch_bound.h"
#include "minibatch/batch_source.h"
#include "multistage/macro_batch_loader.h"
#include "strata/dataset.h"
#include "strata/graph.h"
#include "strata/train.h"

namespace strata {

// The least the macro-batch loader options.multistage asks for needs from the budget, known
// before it is built (PartitionLoader::LeastBytes, LargeBatchLoader::LeastBytes, the latter
// from the largest mini-batch the options draw).
uint64_t MacroBatchLeastBytes(const Dataset& dataset, const CscGraph& graph,
                              const TrainOptions& options, const BatchBound& largest_batch);

class MacroBatchSource final : public BatchSource {
 public:
  // The loader options.multistage.method asks for; `graph` (the dataset's topology) must
  // outlive the source. Batch features go to `output_arena` when given (the Python loader's
  // pinned buffers), waiting for room; otherwise to arrays charged to the budget, or, with a
  // `batch_reserve` (the memory plan's), charged with the batch's blocks as BatchMemory says.
  MacroBatchSource(const Dataset& dataset, const CscGraph& graph,
                   const std::vector<uint64_t>& train_ids, const TrainOptions& options,
                   MemoryBudget& budget, HostArena* output_arena = nullptr,
                   MemoryBudget* batch_reserve = nullptr);
  ~MacroBatchSource() override;

  // An estimate for progress: the exact count depends on how the training nodes fall into
  // macro-batches; with adaptive reuse, the count for one pass each; with ranks, one rank's.
  uint64_t batches_per_epoch() const override;
  std::unique_ptr<BatchStream> StartEpoch(uint64_t epoch) override;
  void LeaveOutRows(const NodeSet* rows) override { left_out_ = rows; }

  uint32_t macro_batch() const { return loader_->macro_batch(); }

 private:
  TrainOptions options_;
  MemoryBudget& budget_;
  HostArena* output_arena_;
  MemoryBudget* batch_reserve_;
  const NodeSet* left_out_ = nullptr;
  uint64_t train_count_;
  uint64_t feature_dim_;
  std::unique_ptr<MacroBatchLoader> loader_;
  uint64_t steps_ = 0;  // batches handed out, all epochs: the historical embeddings' clock
};

}  // namespace strata
