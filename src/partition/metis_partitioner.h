// METIS k-way partitioning (G. Karypis and V. Kumar, "A Fast and High Quality Multilevel
// Scheme for Partitioning Irregular Graphs", SIAM J. Sci. Comput. 20(1), 1998) through
// Debian's libmetis: the in-memory baseline GAP is measured against, as the thesis does
// (§4.4.2). The whole graph is handed to METIS as a symmetric adjacency without self loops,
// so it needs the topology in memory several times over; it is refused in one line when that
// estimate exceeds the budget. With balance constraints, as DistDGL uses them, each part also
// holds its share of the training nodes, or of each class's training nodes (METIS's
// multi-constraint mode).
#pragma once

#include <cstdint>
#include <span>

#include "partition/partitioning.h"
#include "strata/partition.h"

namespace strata {

// The memory METIS is expected to need for `graph` with `constraints` weights a node: ten times
// the symmetric CSR and weights it is given, for its coarsening levels and refinement
// (measured: 15.7 GB peak RSS for a 1.6 GB CSR of 10M nodes and 199M edges, K = 64).
uint64_t MetisMemoryEstimate(const CscGraph& graph, uint64_t constraints);

// `groups` as LabelGroups gives them (num_classes: not a training node).
Partitioning MetisPartition(const CscGraph& graph, uint32_t parts, MetisBalance balance,
                            std::span<const uint32_t> groups, uint32_t num_classes, uint64_t seed,
                            MemoryBudget& budget);

}  // namespace strata
