// MacroBatchLoader reads the macro-batches of multistage training (Hanoi: T. Huang, "Efficient
// Systems for Large-Scale Graph Representation Learning", MIT PhD thesis, 2025, §4.2) from a
// partitioned dataset (docs/format.md): the feature rows and in-neighbour lists of a few
// partitions, each one contiguous range of features.bin and graph/indices.bin, read with
// large sequential direct reads through the IoEngine into one of two buffers, and the
// macro-batch graph induced on those partitions' nodes and the hubs, in local ids.
//
// The hub section (ids, rows, in-neighbour lists) is read once and stays in memory; a hub
// is in every macro-batch. Local ids number the macro-batch's partitions in the order given,
// then the hubs outside them; a local node's in-neighbours are those of its global
// in-neighbours that are in the macro-batch, in the CSC's order.
//
// Memory: both buffers are allocated up front for the largest macro-batch of the given size
// and charged to the budget, with the hub section; the graph and id maps of a loaded
// macro-batch are charged while it lives. Thread safety: Load may run on another thread
// than the one that created the loader, one call at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "storage/aligned_buffer.h"
#include "strata/dataset.h"
#include "strata/graph.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

struct MacroBatch {
  std::vector<uint32_t> partitions;
  int buffer = 0;                              // which of the two buffers holds its rows
  std::vector<uint64_t> global_of;             // local id -> node id
  std::vector<const std::byte*> row_of;        // local id -> its stored feature row
  std::vector<uint64_t> train_local;           // local ids of its training nodes, ascending
  std::unique_ptr<CscGraph> graph;             // induced on its nodes and the hubs, local ids
  std::unique_ptr<TrackedCharge> maps_charge;  // for the three vectors above
  uint64_t bytes_read = 0;
};

class MacroBatchLoader {
 public:
  // `dataset` must have the partitioned layout; `graph` is its topology (only indptr is
  // used); `train` marks the training nodes. Throws an input error naming the budget when two
  // buffers of `macro_batch` partitions (0: the most that fit in half of what the budget has
  // left) do not fit.
  MacroBatchLoader(const Dataset& dataset, const CscGraph& graph, std::vector<bool> train,
                   uint32_t macro_batch, uint32_t io_depth, MemoryBudget& budget);
  ~MacroBatchLoader();
  MacroBatchLoader(const MacroBatchLoader&) = delete;
  MacroBatchLoader& operator=(const MacroBatchLoader&) = delete;

  uint32_t parts() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  uint32_t macro_batch() const { return macro_batch_; }
  uint64_t row_stride() const { return row_stride_; }

  // Reads `partitions` (at most macro_batch()) into buffer `buffer` (0 or 1, not in use by
  // another live MacroBatch) and builds their macro-batch.
  std::unique_ptr<MacroBatch> Load(std::span<const uint32_t> partitions, int buffer);

 private:
  // Bytes of one partition's aligned feature and indices ranges.
  uint64_t FeatureSpan(uint32_t p) const;
  uint64_t IndicesSpan(uint32_t p) const;
  // Buffer bytes for the `count` largest partitions, and what their graph and maps take.
  uint64_t BufferBytes(uint32_t count) const;
  void LoadHubs(const Dataset& dataset);
  // Fills everything of `batch` but the reads, from the indices at `indices_at[i]` for its
  // i-th partition.
  void BuildGraph(MacroBatch& batch, std::span<const std::byte* const> indices_at);

  const CscGraph& graph_;
  std::vector<bool> train_;
  MemoryBudget& budget_;
  std::vector<uint64_t> offsets_;
  uint64_t row_stride_;
  uint32_t id_bytes_;
  uint32_t macro_batch_ = 0;
  uint32_t PartitionOf(uint64_t v) const;

  ChargedArray<uint64_t> hub_ids_;
  std::unordered_map<uint64_t, uint32_t> hub_index_;  // node id -> index in the hub section
  std::vector<bool> is_hub_;  // by node id: most sources are not hubs, and skip the hash
  std::unique_ptr<TrackedCharge> hub_index_charge_;
  // The hub section's edges: those from non-hub sources by source partition (partition p's
  // are [start[p], start[p+1])), then those between hubs, from start[parts] to the end.
  std::vector<uint64_t> edges_by_partition_start_;
  ChargedArray<uint32_t> edge_hub_;     // the hub an edge leads to
  ChargedArray<uint64_t> edge_source_;  // its source: a node id, or a hub's index
  AlignedBuffer hub_rows_;
  AlignedBuffer buffers_;  // two halves of buffer_bytes_
  uint64_t buffer_bytes_ = 0;
  std::unique_ptr<IoEngine> engine_;
  int features_file_ = 0, indices_file_ = 0;
  std::vector<uint64_t> sorted_spans_;  // per-partition buffer bytes, largest first
  std::vector<uint64_t> sorted_nodes_;  // per-partition nodes, largest first
};

}  // namespace strata
