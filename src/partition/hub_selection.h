// Hub selection (Hanoi, T. Huang, MIT PhD thesis, 2025, §4.3.3, eq. 4.1): the nodes whose
// features and adjacency every macro-batch keeps in memory, chosen by their influence on the
// training nodes of the partitions they are not in.
//
// The influence of v on a set B is the landing probability at v of an L-step reverse lazy
// random walk started from B (each step stays with probability ½, else moves to a uniform
// in-neighbour): RLRW_B = Ã^L e_B. Summed over all partitions this is linear in B, so it would
// not depend on the partitioning at all; what a hub adds to a macro-batch is its influence on
// the partitions it is not in — its own partition's training nodes have it anyway. So the
// score is Σ_{p ≠ P(v)} RLRW_{B_p}(v), computed as the walk from every training node minus
// the walk that has stayed inside its start partition (an approximation that counts walks
// which leave and come back as foreign). Two walks, L passes over the edges, streamed.
//
// Memory: four float vectors of num_nodes, charged to the budget.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "partition/partitioning.h"

namespace strata {

class ProgressBar;

// The `count` nodes with the highest cross-partition influence, ascending by id.
std::vector<uint64_t> SelectHubs(const CscGraph& graph, const Partitioning& partitioning,
                                 std::span<const uint64_t> train_ids, uint64_t count,
                                 uint32_t walk_steps, MemoryBudget& budget,
                                 ProgressBar* progress = nullptr);

}  // namespace strata
