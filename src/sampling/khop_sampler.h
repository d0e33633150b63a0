// KHopSampler draws the input nodes of mini-batches the way neighbour sampling does: seeds
// taken from a pool (the training split), then for each layer, from the output layer back to
// the input layer, up to `fanout` distinct random in-neighbours of every frontier node. It
// returns the distinct nodes of the whole neighbourhood, the rows a batch's gather reads.
// It stands in for the full neighbour sampler (which also builds blocks) where only the
// access pattern matters: choosing hot nodes by pre-sampling and benchmarking gathers.
//
// Deterministic: batch b depends only on (seed, b), not on what was drawn before.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

class KHopSampler {
 public:
  // `fanouts` are listed from the input layer to the output layer, as in DGL; -1 takes every
  // in-neighbour. An empty `seed_pool` means every node.
  KHopSampler(const CscGraph& graph, std::vector<uint64_t> seed_pool, std::vector<int> fanouts,
              uint64_t batch_size, uint64_t seed, MemoryBudget& budget);

  // The distinct input nodes of batch `index`, in the order they were reached.
  std::vector<uint64_t> Batch(uint64_t index);

 private:
  const CscGraph& graph_;
  std::vector<uint64_t> seed_pool_;
  std::vector<int> fanouts_;
  uint64_t batch_size_;
  uint64_t seed_;
  ChargedArray<uint32_t> stamp_;  // stamp_[v] == current_stamp_ when v is in the batch
  uint32_t current_stamp_ = 0;
};

}  // namespace strata
