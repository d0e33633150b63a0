// PartitionLookup finds the partition of a node id in a partitioned layout (docs/format.md),
// where partition p holds the ids [offsets[p], offsets[p + 1]). Building a macro-batch graph
// asks this once per edge; a binary search over the offsets costs a chain of unpredictable
// branches each time. Instead a table gives the partition of each 64-id bucket's first id, and
// the few partitions that start inside the bucket are stepped over.
//
// Invariants: offsets ascend from 0 to the node count; every id looked up is below the count.
// Memory: 4 bytes per 64 nodes, charged to the budget.
#pragma once

#include <cstdint>
#include <span>

#include "strata/memory_budget.h"

namespace strata {

class PartitionLookup {
 public:
  PartitionLookup() = default;
  PartitionLookup(std::span<const uint64_t> offsets, MemoryBudget& budget)
      : offsets_(offsets), bucket_first_(budget, Buckets(offsets.back()), "partition lookup") {
    uint32_t p = 0;
    for (uint64_t b = 0; b < bucket_first_.size(); ++b) {
      while (offsets_[p + 1] <= b * kBucket && p + 2 < offsets_.size()) ++p;
      bucket_first_[b] = p;
    }
  }

  // What a lookup over `nodes` ids charges.
  static uint64_t ChargedBytes(uint64_t nodes) { return Buckets(nodes) * sizeof(uint32_t); }

  uint32_t operator()(uint64_t v) const {
    uint32_t p = bucket_first_[v / kBucket];
    while (offsets_[p + 1] <= v) ++p;
    return p;
  }

 private:
  static constexpr uint64_t kBucket = 64;
  static uint64_t Buckets(uint64_t nodes) { return nodes / kBucket + 1; }
  std::span<const uint64_t> offsets_;
  ChargedArray<uint32_t> bucket_first_;
};

}  // namespace strata
