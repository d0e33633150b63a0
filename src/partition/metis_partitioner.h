// METIS k-way partitioning (G. Karypis and V. Kumar, "A Fast and High Quality Multilevel
// Scheme for Partitioning Irregular Graphs", SIAM J. Sci. Comput. 20(1), 1998) through
// Debian's libmetis: the in-memory baseline GAP is measured against, as the thesis does
// (§4.4.2). The whole graph is handed to METIS as a symmetric adjacency without self loops,
// so it needs the topology in memory several times over; it is refused in one line when that
// estimate exceeds the budget.
#pragma once

#include <cstdint>

#include "partition/partitioning.h"

namespace strata {

// The memory METIS is expected to need for `graph`: ten times the symmetric CSR it is given,
// for its coarsening levels and refinement (measured: 15.7 GB peak RSS for a 1.6 GB CSR of 10M
// nodes and 199M edges, K = 64).
uint64_t MetisMemoryEstimate(const CscGraph& graph);

Partitioning MetisPartition(const CscGraph& graph, uint32_t parts, uint64_t seed,
                            MemoryBudget& budget);

}  // namespace strata
