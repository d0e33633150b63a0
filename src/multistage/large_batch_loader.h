// LargeBatchLoader is Joestar's large-batch sampling (LBS; T. Huang, "Efficient Systems for
// Large-Scale Graph Representation Learning", MIT PhD thesis, 2025, §5.2.1) as a macro-batch
// loader: macro-batch m of epoch e is batch m of an ordinary neighbour sampler on the whole
// graph whose batches hold `macro_batch` mini-batches' worth of seeds. Its nodes' rows are
// gathered once through a direct store of its own (sorted and coalesced by the store) into one
// of two float32 buffers. Its graphs are the sample's layers: graph l holds the edges layer l
// drew, over all the sample's nodes in the local ids of its input layer (the seeds first, so
// the seeds are local ids 0 .. seeds-1).
//
// Mini-batches sampled inside it draw layer l from graph l, so with fanouts no higher than the
// first stage's a mini-batch is a slice of the large sample: every node keeps the neighbours
// the first stage drew for it in that layer (or a subset, with lower fanouts). One graph for all
// layers would let a seed's second-stage picks land on nodes the first stage sampled as inputs
// only, whose own neighbourhoods it never drew, and bias the aggregation toward empty ones.
//
// Any dataset works; no partitioning is needed. Because neighbourhoods of seeds in one
// macro-batch overlap, a macro-batch reads fewer rows than its mini-batches would one by one,
// the more so the larger the macro-batch and the more local the graph (thesis Fig. 5.2); a node
// in two mini-batches of one macro-batch has the same neighbours in both (the thesis's "slight
// randomness loss").
//
// Memory: the two buffers are sized from a trial sample of the chosen size (plus a margin) and
// grow when a macro-batch is larger; they, the store's read buffers and each live
// macro-batch's graphs and maps are charged to the budget. With macro_batch 0 the size is the
// largest power of two whose two macro-batches fit in half of what the budget leaves.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "minibatch/batch_bound.h"
#include "multistage/macro_batch_loader.h"
#include "strata/dataset.h"
#include "strata/feature_store.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"
#include "strata/neighbor_sampler.h"
#include "strata/train.h"

namespace strata {

// The direct store a multistage loader gathers rows through (lbs's rows, pbs's halo): the run's
// I/O depth and largest read.
DirectStoreOptions LoaderStoreOptions(const TrainOptions& options);

class LargeBatchLoader final : public MacroBatchLoader {
 public:
  // `graph` must outlive the loader. Throws an input error naming the budget when two
  // macro-batches of `macro_batch` mini-batches do not fit.
  LargeBatchLoader(const Dataset& dataset, const CscGraph& graph,
                   const std::vector<uint64_t>& train_ids, const TrainOptions& options,
                   MemoryBudget& budget);
  ~LargeBatchLoader() override;
  // The least a loader needs from the budget, the refusal above's figure for a macro-batch of
  // one mini-batch, known before it is built from the largest mini-batch the options can draw
  // (minibatch/batch_bound.h): the run's memory plan counts it.
  static uint64_t LeastBytes(const Dataset& dataset, const TrainOptions& options,
                             const BatchBound& largest_batch);

  std::vector<uint64_t> seeds_per_macro_batch(uint64_t epoch) const override;
  uint64_t macro_batches(uint64_t epoch) const override;
  uint32_t macro_batch() const override { return macro_batch_; }
  std::unique_ptr<MacroBatch> Load(uint64_t epoch, uint64_t m, int buffer) override;

 private:
  // What one macro-batch of `macro_batch` mini-batches takes, from a trial sample: its rows
  // and its bytes (rows with a margin, graphs, maps).
  struct Trial {
    uint64_t rows = 0;
    uint64_t bytes = 0;
  };
  Trial RunTrial(const std::vector<uint64_t>& train_ids, uint32_t macro_batch) const;
  // Buffer `buffer`, holding at least `rows` rows.
  float* Reserve(int buffer, uint64_t rows);

  const CscGraph& graph_;
  TrainOptions options_;
  MemoryBudget& budget_;
  uint64_t dim_;
  uint32_t macro_batch_ = 0;
  std::unique_ptr<NeighborSampler> first_stage_;
  std::unique_ptr<FeatureStore> store_;
  ChargedArray<float> buffers_[2];
};

}  // namespace strata
