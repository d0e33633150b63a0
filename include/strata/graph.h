// CscGraph is a dataset's topology: indptr always in memory; indices either read whole into
// memory (ids kept in the file's width, 4 or 8 bytes, so a graph costs what it costs on disk)
// or left on disk behind an adjacency cache (DUCATI's out-of-core adjacency), for graphs
// whose topology does not fit the budget. Everything held is charged to the memory budget.
//
// Invariant: ResolveSources gives the same answers in both placements. Source and InNeighbor
// are the resident placement's fast path and need indices_resident().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "strata/dataset.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

class DiskAdjacency;

enum class TopologyPlacement { kAuto, kMemory, kDisk };
// "auto" | "memory" | "disk"; anything else throws an input error.
TopologyPlacement ParseTopologyPlacement(std::string_view name);
std::string_view TopologyPlacementName(TopologyPlacement placement);

struct TopologyOptions {
  // kAuto: in memory when indptr and indices take at most half the budget's limit, else on
  // disk. A training run's default is kAuto (TrainOptions).
  TopologyPlacement placement = TopologyPlacement::kMemory;
  // On disk: the adjacency cache's size; < 0: an eighth of the budget's limit.
  int64_t adjacency_cache_bytes = -1;
  // On disk: the engine reading indices.bin.
  IoEngineOptions io;
};

// What the on-disk placement has done since the graph was opened; all zero when resident.
struct AdjacencyStats {
  uint64_t entries = 0;     // edge ids resolved
  uint64_t cache_hits = 0;  // of which from the adjacency cache
  uint64_t reads = 0;       // disk reads (filling the cache excluded)
  uint64_t bytes_read = 0;
  uint64_t cached_nodes = 0;  // nodes whose whole list the cache holds
};

class CscGraph {
 public:
  // Loads graph/indptr.bin and, unless the topology stays on disk, graph/indices.bin.
  CscGraph(const Dataset& dataset, MemoryBudget& budget, const TopologyOptions& options = {});
  // A resident graph over given arrays (indptr: num_nodes + 1 offsets; indices: sources), e.g.
  // the subgraph of one macro-batch; the arrays keep their charges.
  CscGraph(ChargedArray<uint64_t> indptr, ChargedArray<uint32_t> indices, MemoryBudget& budget);
  ~CscGraph();
  CscGraph(const CscGraph&) = delete;
  CscGraph& operator=(const CscGraph&) = delete;

  uint64_t num_nodes() const { return num_nodes_; }
  uint64_t num_edges() const { return num_edges_; }
  uint64_t InDegree(uint64_t v) const { return indptr_[v + 1] - indptr_[v]; }
  uint64_t EdgeBegin(uint64_t v) const { return indptr_[v]; }
  // The source of the e-th stored edge.
  uint64_t Source(uint64_t e) const {
    return wide_ ? indices64_[e] : static_cast<uint64_t>(indices32_[e]);
  }
  uint64_t InNeighbor(uint64_t v, uint64_t k) const { return Source(indptr_[v] + k); }

  bool indices_resident() const { return adjacency_ == nullptr; }
  // Replaces every edge id in `edges` by its source node id, in either placement.
  void ResolveSources(std::span<uint64_t> edges) const;
  // Calls fn(first_edge, sources) over consecutive chunks of the stored edges, in edge
  // order: from memory, or streamed from indices.bin when it is on disk. Charges at most
  // kScanChunkEdges × (8 + id width) bytes to the budget while it runs.
  static constexpr uint64_t kScanChunkEdges = uint64_t{1} << 20;
  void ForEachSourceChunk(
      const std::function<void(uint64_t first_edge, std::span<const uint64_t> sources)>& fn) const;
  // The same pass cut at row boundaries: fn(begin, end, sources) for consecutive blocks of whole
  // rows in id order, sources holding the in-neighbours of rows [begin, end) in edge order (row
  // v's from EdgeBegin(v) - EdgeBegin(begin)). A block has at most `block_edges` edges, or is one
  // row with more, whose edges the buffers then grow to hold. Only rows [rows_begin, rows_end)
  // when given.
  void ForEachRowBlock(const std::function<void(uint64_t begin, uint64_t end,
                                                std::span<const uint64_t> sources)>& fn,
                       uint64_t block_edges = kScanChunkEdges, uint64_t rows_begin = 0,
                       uint64_t rows_end = UINT64_MAX) const;
  AdjacencyStats adjacency_stats() const;

 private:
  std::string indices_path_;
  uint64_t num_nodes_;
  uint64_t num_edges_;
  bool wide_;
  ChargedArray<uint64_t> indptr_;
  ChargedArray<uint32_t> indices32_;
  ChargedArray<uint64_t> indices64_;
  MemoryBudget& budget_;
  std::unique_ptr<DiskAdjacency> adjacency_;  // mutable state behind a const graph
};

}  // namespace strata
