// HubLookup finds a node's index in the hub section (its position in the hub list), or -1
// when the node is not a hub. Building a macro-batch graph asks this for every edge whose
// source lies outside the macro-batch's partitions; a hash map probe per edge was a tenth of
// the loader's time. Instead a bitmap marks the hubs, a count per 64-bit word gives the rank
// of a hub among the hubs in ascending id order, and a table maps that rank to its index.
//
// Invariants: hub ids are distinct and below the node count. Memory: about 1.5 bits per node
// and 4 bytes per hub, charged to the budget.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <span>

#include "strata/memory_budget.h"

namespace strata {

class HubLookup {
 public:
  HubLookup() = default;
  HubLookup(std::span<const uint64_t> hub_ids, uint64_t nodes, MemoryBudget& budget)
      : bits_(budget, nodes / 64 + 1, "hub lookup"),
        rank_before_(budget, nodes / 64 + 1, "hub lookup"),
        index_of_rank_(budget, hub_ids.size(), "hub lookup") {
    std::fill(bits_.data(), bits_.data() + bits_.size(), 0);
    for (uint64_t v : hub_ids) bits_[v / 64] |= uint64_t{1} << (v % 64);
    uint32_t rank = 0;
    for (uint64_t w = 0; w < bits_.size(); ++w) {
      rank_before_[w] = rank;
      rank += static_cast<uint32_t>(std::popcount(bits_[w]));
    }
    std::iota(index_of_rank_.data(), index_of_rank_.data() + hub_ids.size(), 0u);
    std::sort(index_of_rank_.data(), index_of_rank_.data() + hub_ids.size(),
              [&](uint32_t a, uint32_t b) { return hub_ids[a] < hub_ids[b]; });
  }

  int64_t operator()(uint64_t v) const {
    const uint64_t word = bits_[v / 64];
    const uint64_t bit = uint64_t{1} << (v % 64);
    if ((word & bit) == 0) return -1;
    return index_of_rank_[rank_before_[v / 64] + std::popcount(word & (bit - 1))];
  }

 private:
  ChargedArray<uint64_t> bits_;
  ChargedArray<uint32_t> rank_before_;
  ChargedArray<uint32_t> index_of_rank_;
};

}  // namespace strata
