// DiskAdjacency answers "which node is the source of edge e" from graph/indices.bin on disk,
// for graphs whose topology does not fit the memory budget (DUCATI's out-of-core adjacency):
// the neighbour lists of the nodes most worth keeping — most often sampled per byte they
// occupy — are held in an adjacency cache filled once; every other entry is read with
// sector-aligned, coalesced direct reads through its own IoEngine (a sampled node's picks lie
// within its list, so they usually share one read).
//
// Invariants: Resolve returns exactly what the file holds, whether an entry came from the
// cache or the disk, and only ids below num_nodes (another is an input error naming the file);
// the cache and the read buffers are charged to the budget.
// Thread safety: Resolve may be called from several threads; calls are serialised.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "storage/aligned_buffer.h"
#include "storage/read_plan.h"
#include "strata/graph.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

class DiskAdjacency {
 public:
  // Opens `indices_path`, whose num_edges entries are `id_bytes` wide, each a node id below
  // num_nodes; the cache starts empty.
  DiskAdjacency(const std::string& indices_path, uint32_t id_bytes, uint64_t num_edges,
                uint64_t num_nodes, const IoEngineOptions& io, MemoryBudget& budget);
  ~DiskAdjacency();
  DiskAdjacency(const DiskAdjacency&) = delete;
  DiskAdjacency& operator=(const DiskAdjacency&) = delete;

  // Replaces every edge id in `edges` (each < num_edges) by its source node id.
  void Resolve(std::span<uint64_t> edges);

  // Fills the cache with whole lists, nodes ranked by `density` (higher first, ties by id),
  // up to `cache_bytes`. `indptr` (num_nodes + 1 entries) locates each node's list.
  void FillCache(std::span<const uint64_t> indptr, std::span<const float> density,
                 uint64_t cache_bytes, MemoryBudget& budget);

  AdjacencyStats stats() const;

 private:
  // A cached list: edges [first_edge, first_edge + count) are at cache_[slot ...].
  struct CachedList {
    uint64_t first_edge;
    uint64_t count;
    uint64_t slot;
  };

  // The cached list holding edge e, or nullptr.
  const CachedList* Find(uint64_t e) const;
  // Reads the entries `unique_edges` (sorted, distinct) into values_.
  void ReadEntries(std::span<const uint64_t> unique_edges);

  std::string path_;
  uint32_t id_bytes_;
  uint64_t num_edges_;
  uint64_t num_nodes_;
  AlignedBuffer staging_;
  std::unique_ptr<IoEngine> engine_;
  int file_ = -1;
  ReadShape shape_;
  uint64_t slot_bytes_ = 0;
  std::vector<CachedList> cached_;  // sorted by first_edge
  ChargedArray<uint64_t> cache_;

  mutable std::mutex mutex_;
  AdjacencyStats stats_;
  // Scratch, reused between calls.
  std::vector<std::pair<uint64_t, uint32_t>> misses_;  // (edge, position in the call's span)
  std::vector<uint64_t> unique_;
  std::vector<uint32_t> keys_;
  std::vector<uint64_t> values_;  // source of unique_[k]
  ReadPlan plan_;
  std::vector<ReadRequest> requests_;
  std::vector<ReadCompletion> completions_;
  std::vector<uint32_t> slot_read_;   // slot -> index of the read it holds
  std::vector<uint32_t> free_slots_;  // staging slots not holding a read
};

}  // namespace strata
