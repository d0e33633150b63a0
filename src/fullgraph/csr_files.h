// The full graph's CSR files read whole into memory charged to a budget: row offsets
// (checked), the GCN's normalised adjacency Â = D^-1/2 (A + I) D^-1/2 with its self loops
// stored, and the sparse features X — the operands of Â · X, the product AIRES multiplies
// out of core, which `strata bench spgemm` and bench/spgemm_vs_graphblas time in memory.
//
// Â is the matrix the full-graph runner propagates with (propagation.h, the same
// normalisation): row i holds (i, norm_i²) and, for each stored edge j -> i, (j, norm_i norm_j).
// Columns ascend within a row as the stored ids do; a stored self loop is a second entry at
// column i, as it is a second term in Propagate.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "dataset/stored_ids.h"
#include "nn/spgemm.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata {

struct ChargedCsr {
  uint64_t rows = 0, cols = 0;
  ChargedArray<uint64_t> indptr;  // rows + 1
  ChargedArray<uint32_t> indices;
  ChargedArray<float> values;

  uint64_t nnz() const { return indices.size(); }
  CsrView view() const {
    return {rows,
            cols,
            {indptr.data(), indptr.size()},
            {indices.data(), indices.size()},
            {values.data(), values.size()}};
  }
};

// Reads rows + 1 offsets of `path`, checking them (CheckRowOffsets).
ChargedArray<uint64_t> ReadRowOffsets(const std::string& path, uint64_t rows, uint64_t end,
                                      MemoryBudget& budget, std::string_view what);

// Â's first `rows` rows (all of its columns).
ChargedCsr ReadNormalisedAdjacency(const Dataset& dataset, uint64_t rows, MemoryBudget& budget);

// X. A dataset without features or with dense ones is an input error naming it.
ChargedCsr ReadSparseFeatures(const Dataset& dataset, MemoryBudget& budget);

}  // namespace strata
