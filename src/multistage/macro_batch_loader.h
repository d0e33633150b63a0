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
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "multistage/history_write_back.h"
#include "strata/block.h"
#include "strata/dataset.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

// Partition-based sampling's halo of a macro-batch: the first-hop in-neighbours of its
// partitions' nodes that are outside them, local ids [begin, end); their in-lists in the
// macro-batch graph are empty, so sampling stops there. Only the rows some mini-batch uses are
// loaded (ahead-of-time: the mini-batches are sampled before): feature rows for the halo
// nodes among the input layer's, historical rows for those among a hidden layer's.
struct Halo {
  static constexpr uint32_t kNotLoaded = UINT32_MAX;
  uint64_t begin = 0;
  std::vector<uint32_t> partitions;  // the macro-batch's, in local id order
  int buffer = 0;
  std::vector<uint32_t> feature_slot;  // per halo node: its row in `features`, or kNotLoaded
  std::vector<uint32_t> history_slot;  // per halo node: its row in `history`, or kNotLoaded
  ChargedArray<float> features;        // float32 rows
  ChargedArray<uint16_t> history;      // float16 historical rows
  std::vector<uint32_t> stamps;        // per history row: the step that wrote it
  // Takes the fresh rows the macro-batch's steps compute for its partitions' nodes.
  std::shared_ptr<HistoryWriteBack> write_back;
  uint64_t feature_bytes_read = 0;
  uint64_t history_bytes_read = 0;
};

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
  std::unique_ptr<Halo> halo;  // partition-based sampling only
  // Ahead of time (and partition-based sampling): the mini-batches of every pass, sampled
  // structure only when the graph was built, and the local ids whose feature rows they use
  // (ascending), which are all the loader then reads.
  std::vector<SampledBatch> presampled;
  std::optional<std::vector<uint64_t>> input_rows;
  uint64_t aot_bytes_saved = 0;  // feature bytes not read, ahead of time
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
  // Called by Load with the macro-batch once its graph is built, while its rows may still be
  // arriving (a loader that reads them first calls it after): partition-based sampling reads
  // the halo's rows there, so that the random reads overlap the sequential ones.
  void set_graph_built(std::function<void(MacroBatch&)> graph_built) {
    graph_built_ = std::move(graph_built);
  }
  // Partition-based sampling: writes a macro-batch's fresh historical rows (every batch of it
  // trained) to the table, before a later macro-batch loads into its buffer. Returns the
  // bytes written.
  virtual uint64_t WriteBack(HistoryWriteBack& write_back) { return 0; }
  // Partition-based sampling: loads a macro-batch's rows of the halo nodes `input` and `hidden`
  // (local ids, ascending: those of the input layer's, of a hidden layer's) and the history of
  // its partitions' nodes, after the table has every write-back before it.
  virtual void LoadHalo(MacroBatch& batch, std::span<const uint64_t> input,
                        std::span<const uint64_t> hidden) {}

 protected:
  std::function<void(MacroBatch&)> graph_built_;
};

}  // namespace strata
