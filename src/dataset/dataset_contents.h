// CheckDatasetContents checks what a dataset's files mean, where Dataset::Verify's checksums
// only check that they are the bytes meta.json recorded (a file rewritten with a fresh
// checksum passes those): the graph's offsets rise from 0 to num_edges and agree with the
// recorded in-degrees, every stored node id is below num_nodes, labels lie in [-1,
// num_classes), no node is in two splits or twice in one, sparse features' offsets rise and
// their columns lie below feature_dim, and a partitioned layout's offsets, original ids (a
// permutation) and hub section are consistent. Files are streamed in chunks; the one large
// allocation, a bit per node, is charged to the budget.
#pragma once

#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata {

// Throws an input error naming the first file and position that is wrong.
void CheckDatasetContents(const Dataset& dataset, MemoryBudget& budget);

}  // namespace strata
