// CscBuilder turns a stream of directed edges src -> dst, in any order and with repeats, into
// the dataset's CSC: for every destination its in-neighbours, sorted ascending and (by
// default) distinct. It works in bounded memory whatever the number of edges: edges gather
// in a run buffer charged to the budget; a full buffer is radix-sorted, deduplicated and
// spilled as a sorted run file into the spill directory; Finish merges the runs (in several
// passes when there are more than the buffer can serve at once) and streams indptr and
// indices to their files.
//
// An edge is packed into one key, (dst << id_bits) | src, so sorting keys sorts by
// destination, then source. Keys are 64-bit while 2 * id_bits <= 64 and 128-bit beyond.
//
// Thread safety: none; one thread adds and finishes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "dataset/csc_writer.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata {

class ProgressBar;

// Bits needed to hold every id below `num_nodes` (at least 1).
uint32_t IdBitsFor(uint64_t num_nodes);

class CscBuilder {
 public:
  // `buffer_bytes` of the budget are charged for the run buffer and its sort scratch; every
  // id added later must be below 2^id_bits. Run files go to `spill_dir`, which must exist.
  CscBuilder(MemoryBudget& budget, uint64_t buffer_bytes, std::string spill_dir, uint32_t id_bits,
             bool deduplicate);
  ~CscBuilder();
  CscBuilder(const CscBuilder&) = delete;
  CscBuilder& operator=(const CscBuilder&) = delete;

  // Adds the edges src[i] -> dst[i]. The caller has checked every id against the node count.
  void Add(std::span<const uint64_t> src, std::span<const uint64_t> dst);

  uint64_t edges_added() const;
  uint32_t id_bits() const;

  // Sorts, merges and writes the CSC for `num_nodes` nodes (every added id must be below it),
  // with ids stored in `node_id_bytes` bytes; with `add_self_loops` every node also gets itself
  // as an in-neighbour (once, whether or not the input had that loop). Removes the run files.
  CscBuildResult Finish(uint64_t num_nodes, uint32_t node_id_bytes, bool add_self_loops,
                        const std::string& indptr_path, const std::string& indices_path,
                        ProgressBar* progress);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
