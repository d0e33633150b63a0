// Size-constrained label propagation: groups a graph's nodes into clusters of at most
// `max_size` nodes, each node joining the cluster most of its in-neighbours are in. GAP places
// these clusters whole before it refines node by node, which a node-by-node stream cannot
// reach: it escapes the local optima where each node follows the neighbours placed before it.
//
// Invariant: every cluster id is a node id below the node count; no cluster exceeds max_size.
#pragma once

#include <cstdint>

#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

class ProgressBar;

// Streams the in-neighbour lists `rounds` times in id order (sequential reads, from disk when
// the topology is there). Memory: 12 bytes a node, charged to `budget`, 4 of them returned.
ChargedArray<uint32_t> SizeConstrainedClusters(const CscGraph& graph, uint64_t max_size,
                                               uint32_t rounds, MemoryBudget& budget,
                                               ProgressBar* progress = nullptr);

}  // namespace strata
