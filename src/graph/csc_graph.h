// CscGraph is a dataset's topology: indptr always in memory; indices either read whole into
// memory (ids kept in the file's width, 4 or 8 bytes, so a graph costs what it costs on disk)
// or left on disk behind a DiskAdjacency with its own adjacency cache, for graphs whose
// topology does not fit the budget. Everything held is charged to the memory budget.
//
// Invariant: ResolveSources gives the same answers in both placements. Source and InNeighbor
// are the resident placement's fast path and need indices_resident().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/disk_adjacency.h"
#include "strata/dataset.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

struct TopologyOptions {
  bool on_disk = false;
  // On disk: the adjacency cache's size, and the engine reading indices.bin.
  uint64_t adjacency_cache_bytes = 0;
  IoEngineOptions io;
};

class CscGraph {
 public:
  // Loads graph/indptr.bin and, unless it stays on disk, graph/indices.bin of an opened
  // dataset.
  CscGraph(const std::string& dataset_dir, const DatasetMeta& meta, MemoryBudget& budget,
           const TopologyOptions& options = {});
  ~CscGraph();

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
  // order: from memory, or streamed from indices.bin when it is on disk.
  void ForEachSourceChunk(
      const std::function<void(uint64_t first_edge, std::span<const uint64_t> sources)>& fn) const;
  // The disk placement's reader (its statistics); nullptr when resident.
  const DiskAdjacency* adjacency() const { return adjacency_.get(); }

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

// Reads a split file (split/train.bin, ...) into memory as 64-bit ids.
std::vector<uint64_t> ReadSplit(const std::string& dataset_dir, const DatasetMeta& meta,
                                const std::string& split);

}  // namespace strata
