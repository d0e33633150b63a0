// Hotness scores: how often training is expected to read each node's features. The static
// hot tier of the feature cache keeps the highest-scoring rows. Three estimates:
//  - presample (GNNLab, Helios): run the sampler over some batches and count accesses;
//  - reverse PageRank (GIDS §3.3): PageRank flowing from destinations to their sampled
//    in-neighbours, restarting at the training nodes;
//  - degree: how many in-neighbour lists a node appears in (its out-degree; equal to its
//    in-degree on undirected graphs), a free but cruder proxy.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "strata/feature_store.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

// The nodes whose features presampled batch b reads (b counts from 0).
using PresampleBatch = std::function<std::vector<uint64_t>(uint64_t b)>;

// Access counts over presampled batches 0 .. batches - 1.
ChargedArray<float> PresampleScores(const PresampleBatch& batch, uint64_t batches,
                                    uint64_t num_nodes, MemoryBudget& budget);
// `iterations` rounds of reverse PageRank with damping `alpha`, restarting at `seeds`
// (every node when empty).
ChargedArray<float> ReversePageRankScores(const CscGraph& graph, std::span<const uint64_t> seeds,
                                          int iterations, double alpha, MemoryBudget& budget);
ChargedArray<float> DegreeScores(const CscGraph& graph, MemoryBudget& budget);

// The scores `policy` gives: presample over `presample_batches` batches, reverse PageRank
// (20 rounds, damping 0.85) restarting at `seeds`, or degree.
ChargedArray<float> HotnessScores(HotnessPolicy policy, const CscGraph& graph,
                                  std::span<const uint64_t> seeds, const PresampleBatch& batch,
                                  uint64_t presample_batches, MemoryBudget& budget);

// The ids of the `count` highest scores, highest first (ties by smaller id).
std::vector<uint64_t> TopScored(const ChargedArray<float>& scores, uint64_t count,
                                MemoryBudget& budget);

}  // namespace strata
