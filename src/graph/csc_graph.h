// CscGraph is a dataset's topology held in memory: indptr and indices read whole from
// graph/, charged to the memory budget, ids kept in the file's width (4 or 8 bytes) so a
// graph costs what it costs on disk.
//
// Invariant: InNeighbor(v, k) for k < InDegree(v) is the k-th in-neighbour of v, ascending.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata {

class CscGraph {
 public:
  // Loads graph/indptr.bin and graph/indices.bin of an opened dataset.
  CscGraph(const std::string& dataset_dir, const DatasetMeta& meta, MemoryBudget& budget);

  uint64_t num_nodes() const { return num_nodes_; }
  uint64_t num_edges() const { return num_edges_; }
  uint64_t InDegree(uint64_t v) const { return indptr_[v + 1] - indptr_[v]; }
  uint64_t EdgeBegin(uint64_t v) const { return indptr_[v]; }
  // The source of the e-th stored edge.
  uint64_t Source(uint64_t e) const {
    return wide_ ? indices64_[e] : static_cast<uint64_t>(indices32_[e]);
  }
  uint64_t InNeighbor(uint64_t v, uint64_t k) const { return Source(indptr_[v] + k); }

 private:
  uint64_t num_nodes_;
  uint64_t num_edges_;
  bool wide_;
  ChargedArray<uint64_t> indptr_;
  ChargedArray<uint32_t> indices32_;
  ChargedArray<uint64_t> indices64_;
};

// Reads a split file (split/train.bin, ...) into memory as 64-bit ids.
std::vector<uint64_t> ReadSplit(const std::string& dataset_dir, const DatasetMeta& meta,
                                const std::string& split);

}  // namespace strata
