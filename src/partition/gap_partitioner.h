// GAP, the GNN-aware graph partitioner of Hanoi (T. Huang, "Efficient Systems for Large-Scale
// Graph Representation Learning", MIT PhD thesis, 2025, §4.3.2, Algorithm 2, eq. 4.2):
// streaming Fennel whose balance term is split per label group, so that every partition gets
// its share of each training label, with neighbour-guided search so that placing a node costs
// O(deg + log k) instead of O(k).
//
// A node v of group ℓ goes to the partition p maximising
//     |N(v) ∩ V_p| − α γ (|V_p^ℓ| / μ_ℓ)^(γ−1),    μ_ℓ = n_ℓ / n,  α = √k · m / n^1.5
// (m undirected edges, γ = 1.5), among the partitions where group ℓ is below its capacity
// ⌈imbalance · n_ℓ / k⌉. Only two candidates are compared: the partition with the best
// balance term (kept in an ordered set per group) and the best of the partitions v's
// in-neighbours are in.
//
// Optionally (cluster_rounds > 0), before the passes, size-constrained label propagation
// groups the nodes into clusters of at most n / k nodes, and each cluster is placed whole,
// largest first onto the lightest partition: a coarsening step, as multilevel partitioners
// take, which cuts fewer edges at a few hundred parts but not at a thousand (bench/README.md).
// Nodes stream in id order, the order of the CSC on disk, so each round and pass reads indptr and
// indices sequentially (from memory, or from disk when the topology does not fit); generated and
// most imported graphs have no locality in their ids, which is the random order Fennel assumes.
// Without clusters, the first pass places each node among the nodes placed before it; every other
// pass moves every node out and places it again knowing all its neighbours.
//
// Memory: the assignment (4 bytes per node) plus O(k · groups), and 12 bytes per node more
// while clustering, charged to the budget; the caller's label groups are 4 bytes per node
// more.
#pragma once

#include <cstdint>
#include <span>

#include "partition/partitioning.h"

namespace strata {

class ProgressBar;

struct GapOptions {
  uint32_t parts = 0;
  uint32_t passes = 2;
  // Label-propagation rounds before the passes; 0: none, the thesis's GAP. With clusters one
  // pass does (the first pass of a plain stream only places each node among those before it).
  uint32_t cluster_rounds = 0;
  double imbalance = 1.05;  // capacity of each (partition, group): this × its even share
  double gamma = 1.5;
};

// `groups[v]` is v's label group, below `num_groups` (see LabelGroups). `progress`, when
// given, counts the nodes placed in each pass.
Partitioning GapPartition(const CscGraph& graph, std::span<const uint32_t> groups,
                          uint32_t num_groups, const GapOptions& options, MemoryBudget& budget,
                          ProgressBar* progress = nullptr);

}  // namespace strata
