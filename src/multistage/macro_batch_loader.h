// MacroBatchLoader is the first stage of multistage training (Hanoi and Joestar: T. Huang,
// "Efficient Systems for Large-Scale Graph Representation Learning", MIT PhD thesis, 2025,
// §4.2 and §5.2): it loads the macro-batches of an epoch, each a subgraph in local ids with
// the feature rows of its nodes in memory, into one of two buffers. The second stage
// (MacroBatchSource) samples mini-batches inside a loaded macro-batch while the next loads.
//
// Two loaders: PartitionLoader reads whole partitions of a partitioned dataset with large
// sequential reads (Hanoi), LargeBatchLoader samples the neighbourhood of many mini-batches'
// seeds at once and gathers its rows through the direct store (Joestar's large-batch
// sampling).
//
// Invariants: macro-batch m of epoch e depends on (seed, e, m) only; a MacroBatch's rows stay
// valid until it is destroyed and its buffer is not handed to another Load while it lives.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "strata/dataset.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

struct MacroBatch {
  int buffer = 0;  // which of the two buffers holds its rows
  FeatureDtype row_dtype = FeatureDtype::kFloat32;
  std::vector<uint64_t> global_of;       // local id -> node id
  std::vector<const std::byte*> row_of;  // local id -> its feature row, in row_dtype
  std::vector<uint64_t> train_local;     // local ids of its training seeds
  // The macro-batch's subgraph in local ids: one graph, or one per layer (input layer first)
  // that the mini-batches' layers draw from.
  std::vector<std::unique_ptr<CscGraph>> graphs;
  std::unique_ptr<TrackedCharge> maps_charge;  // for the three vectors above
  uint64_t bytes_read = 0;
};

class MacroBatchLoader {
 public:
  virtual ~MacroBatchLoader() = default;

  // The macro-batches of `epoch`.
  virtual uint64_t macro_batches(uint64_t epoch) const = 0;
  // Its size: partitions, or mini-batches of seeds.
  virtual uint32_t macro_batch() const = 0;
  // The training seeds each macro-batch of `epoch` will hold, known before any is loaded.
  virtual std::vector<uint64_t> seeds_per_macro_batch(uint64_t epoch) const = 0;
  // Loads macro-batch `m` of `epoch` into buffer `buffer` (0 or 1, not in use by another live
  // MacroBatch). One call at a time, from any one thread.
  virtual std::unique_ptr<MacroBatch> Load(uint64_t epoch, uint64_t m, int buffer) = 0;
};

}  // namespace strata
