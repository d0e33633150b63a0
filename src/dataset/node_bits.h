// NodeBits is a bit per node, charged to a memory budget: which nodes a pass over a dataset has
// met (the split writers, so that no node is in two splits; the dataset check). All clear when
// made.
#pragma once

#include <algorithm>
#include <cstdint>

#include "strata/memory_budget.h"

namespace strata {

class NodeBits {
 public:
  NodeBits(uint64_t num_nodes, MemoryBudget& budget)
      : num_nodes_(num_nodes), words_(budget, (num_nodes + 63) / 64, "a bit per node") {
    Clear();
  }

  uint64_t num_nodes() const { return num_nodes_; }
  void Clear() { std::fill(words_.data(), words_.data() + words_.size(), 0); }
  // Sets the bit of v (< num_nodes()); whether it was set before.
  bool TestAndSet(uint64_t v) {
    uint64_t& word = words_[v / 64];
    const uint64_t bit = uint64_t{1} << (v % 64);
    const bool was = (word & bit) != 0;
    word |= bit;
    return was;
  }

 private:
  uint64_t num_nodes_;
  ChargedArray<uint64_t> words_;
};

}  // namespace strata
