// PartitionLoader is Hanoi's macro-batch loader (T. Huang, "Efficient Systems for Large-Scale
// Graph Representation Learning", MIT PhD thesis, 2025, §4.2): per epoch the partitions of a
// partitioned dataset (docs/format.md) are shuffled by (seed, epoch) and taken `macro_batch` at a
// time. A macro-batch is the feature rows and in-neighbour lists of its partitions, each one
// contiguous range of features.bin and graph/indices.bin, read with large sequential direct
// reads through the IoEngine into one of two buffers, and the graph induced on those
// partitions' nodes and the hubs, in local ids. The lists are read first and the graph is
// built while the rows stream in: the build was half the loader's time when it waited for
// every read.
//
// The hub section (ids, rows, in-neighbour lists) is read once and stays in memory; a hub
// is in every macro-batch. Where the whole section and two buffers of one partition do not
// fit the budget, the most connected hubs that do stay and the others are ordinary nodes,
// loaded with their partitions (said on stderr): the hubs come before macro-batches larger
// than one partition, and the refusal is left for budgets where one partition does not fit.
// Local ids number the macro-batch's partitions in the order given, then the hubs outside
// them; a local node's in-neighbours are those of its global in-neighbours that are in the
// macro-batch, in the CSC's order.
//
// Partition-based sampling (HaloOptions::history_values > 0): a macro-batch also holds its halo
// (macro_batch_loader.h), local ids after the hubs, in ascending node id; LoadHalo then gathers
// the feature rows of those the mini-batches use through the direct store, and their
// historical rows from the HistoryTable with the partitions' rows (a HistoryWriteBack). The hubs
// keep only the in-neighbours the hub section has, as before: they are in every macro-batch, never
// in a halo.
//
// Ahead of time (ahead_of_time): the rows are read after the graph is built and the
// graph_built callback has named the rows the mini-batches use (MacroBatch::input_rows): only
// the 4 KiB units holding those, with gaps under 64 KiB read through.
//
// Memory: both buffers are allocated up front for the largest macro-batch of the given size
// and charged to the budget, with the hub section; the graph and id maps of a loaded
// macro-batch are charged while it lives.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "multistage/history_table.h"
#include "multistage/hub_lookup.h"
#include "multistage/macro_batch_loader.h"
#include "multistage/partition_lookup.h"
#include "storage/aligned_buffer.h"
#include "strata/dataset.h"
#include "strata/feature_store.h"
#include "strata/graph.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

// Partition-based sampling's settings; history_values 0 is partition mode (no halo).
struct HaloOptions {
  uint64_t history_values = 0;  // float16 values of a node's historical row
  std::string scratch_dir;      // where the history table's file goes
  DirectStoreOptions store;     // reads the halo's feature rows
};

class PartitionLoader final : public MacroBatchLoader {
 public:
  // `dataset` must have the partitioned layout; `graph` is its topology (only indptr is
  // used); `train` marks the training nodes. Throws an input error naming the budget when two
  // buffers of `macro_batch` partitions (0: the most that fit in half of what the budget has
  // left, and at most a `ranks`-th of the partitions, so that every rank gets one) do not fit.
  PartitionLoader(const Dataset& dataset, const CscGraph& graph, std::vector<bool> train,
                  uint32_t macro_batch, uint32_t io_depth, uint64_t seed, MemoryBudget& budget,
                  uint32_t ranks = 1, bool ahead_of_time = false, HaloOptions halo = {});
  ~PartitionLoader() override;
  PartitionLoader(const PartitionLoader&) = delete;
  PartitionLoader& operator=(const PartitionLoader&) = delete;

  // The least a loader of `dataset` needs from the budget, the refusal above's figure, known
  // before it is built: the run's memory plan counts it, so that the budget it names works.
  static uint64_t LeastBytes(const Dataset& dataset, const CscGraph& graph,
                             const HaloOptions& halo);

  uint32_t parts() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  uint64_t macro_batches(uint64_t epoch) const override;
  std::vector<uint64_t> seeds_per_macro_batch(uint64_t epoch) const override;
  uint32_t macro_batch() const override { return macro_batch_; }
  std::unique_ptr<MacroBatch> Load(uint64_t epoch, uint64_t m, int buffer) override;
  uint64_t WriteBack(HistoryWriteBack& write_back) override;
  void LoadHalo(MacroBatch& batch, std::span<const uint64_t> input,
                std::span<const uint64_t> hidden) override;

  // Reads `partitions` (at most macro_batch()) into buffer `buffer` and builds their
  // macro-batch, whose seeds are its partitions' training nodes in ascending local id.
  std::unique_ptr<MacroBatch> LoadPartitions(std::span<const uint32_t> partitions, int buffer);

  // The most edges of the hub section a macro-batch of `count` partitions keeps in the lists
  // of the hubs outside its partitions: the hub-to-hub edges and the `count` partitions' with
  // the most edges into hubs. The buffers are sized with it, not with every hub edge.
  uint64_t MaxKeptHubEdges(uint32_t count) const;

 private:
  // Buffer bytes for the `count` largest partitions, and what their graph and maps take.
  uint64_t BufferBytes(uint32_t count) const;
  void LoadHubs(const Dataset& dataset);
  // The hubs of the section (positions in `ids`, ascending; `indptr` and `indices` their
  // lists) to keep in `available_bytes`: all of them when they fit with two buffers of one
  // partition, else the most connected that do (in-degree: on the undirected graphs hubs are
  // chosen on, how many lists a hub is in).
  std::vector<uint64_t> HubsWithin(const ChargedArray<uint64_t>& ids,
                                   const ChargedArray<uint64_t>& indptr,
                                   const ChargedArray<uint64_t>& indices,
                                   uint64_t available_bytes) const;
  // Fills the maps and graph of `batch`, the rows of its i-th partition to be at `rows_at[i]`
  // (they may still be arriving) and its lists at `indices_at[i]` (read already).
  void BuildBatch(MacroBatch& batch, std::span<const uint32_t> partitions,
                  std::span<const std::byte* const> rows_at,
                  std::span<const std::byte* const> indices_at);
  // Where each partition's feature range starts in the file (aligned) and in the buffer.
  struct RowRanges {
    std::vector<uint64_t> file_first;
    std::vector<std::byte*> buffer_at;
  };
  // Reads of the units holding the rows of `locals` (ascending local ids; those beyond the
  // partitions are not read), each to its place in the partitions' ranges.
  std::vector<ReadRequest> TouchedRowReads(std::span<const uint32_t> partitions,
                                           std::span<const uint64_t> locals,
                                           const RowRanges& ranges) const;
  // Fills everything of `batch` but the reads, from the indices at `indices_at[i]` for its
  // i-th partition.
  void BuildGraph(MacroBatch& batch, std::span<const uint32_t> partitions,
                  std::span<const std::byte* const> indices_at);
  // Gives the edges from outside the partitions (`cut`: position in `kept`, source node) local
  // ids after every other node's, one per source, and the halo's nodes empty lists.
  void NumberHalo(MacroBatch& batch, std::span<const uint32_t> partitions,
                  std::span<const std::pair<uint64_t, uint64_t>> cut, std::vector<uint32_t>& kept,
                  ChargedArray<uint64_t>& indptr);
  uint64_t HistoryBufferBytes(uint32_t count) const;

  const CscGraph& graph_;
  std::vector<bool> train_;
  std::vector<uint64_t> train_in_partition_;  // training nodes per partition
  MemoryBudget& budget_;
  std::vector<uint64_t> offsets_;
  uint64_t row_stride_;
  FeatureDtype row_dtype_;
  uint32_t id_bytes_;
  uint32_t macro_batch_ = 0;
  uint64_t seed_;
  bool ahead_of_time_;
  PartitionLookup partition_of_;

  ChargedArray<uint64_t> hub_ids_;
  HubLookup hub_index_;  // node id -> index in the hub section, or -1
  // The hub section's edges: those from non-hub sources by source partition (partition p's
  // are [start[p], start[p+1])), then those between hubs, from start[parts] to the end.
  std::vector<uint64_t> edges_by_partition_start_;
  ChargedArray<uint32_t> edge_hub_;  // the hub an edge leads to
  // Its source: the offset in its partition (partition edges), or a hub's index (hub to hub);
  // four bytes either way, where node ids would take eight.
  ChargedArray<uint32_t> edge_source_;
  AlignedBuffer hub_rows_;
  AlignedBuffer buffers_;  // two halves of buffer_bytes_
  uint64_t buffer_bytes_ = 0;
  std::unique_ptr<IoEngine> engine_;
  int features_file_ = 0, indices_file_ = 0;
  std::string indices_path_;
  std::vector<uint64_t> sorted_spans_;  // per-partition buffer bytes, largest first
  std::vector<uint64_t> sorted_nodes_;  // per-partition nodes, largest first
  std::vector<uint64_t> sorted_edges_;  // per-partition in-edges, most first
  // A macro-batch buffer of the largest partition with no hubs (PartitionSizes).
  uint64_t one_partition_bytes_ = 0;
  // What partition-based sampling needs beside the buffers' partitions and hubs: the hubs kept
  // leave it room.
  uint64_t halo_reserve_ = 0;
  // Per-partition hub edges (from its nodes into hubs), most first: a macro-batch of n
  // partitions keeps at most the hub-to-hub edges and the n largest of these.
  std::vector<uint64_t> sorted_hub_edges_;

  // Partition-based sampling only.
  uint64_t history_values_ = 0;
  std::unique_ptr<FeatureStore> halo_store_;
  std::unique_ptr<HistoryTable> history_;
  AlignedBuffer history_rows_;  // two halves of history_buffer_bytes_
  uint64_t history_buffer_bytes_ = 0;
  ChargedArray<uint32_t> history_stamps_;  // two halves of sorted-largest nodes
  uint64_t stamps_per_buffer_ = 0;
};

}  // namespace strata
