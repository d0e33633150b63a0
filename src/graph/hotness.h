// Hotness scores: how often training is expected to read each node's features. The static
// hot tier of the feature cache keeps the highest-scoring rows. Three estimates:
//  - presample (GNNLab, Helios): run the sampler over some batches and count accesses;
//  - reverse PageRank (GIDS §3.3): PageRank flowing from destinations to their sampled
//    in-neighbours, restarting at the training nodes;
//  - degree: how many in-neighbour lists a node appears in (its out-degree; equal to its
//    in-degree on undirected graphs), a free but cruder proxy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/csc_graph.h"
#include "strata/memory_budget.h"

namespace strata {

class KHopSampler;

enum class HotnessPolicy { kPresample, kReversePageRank, kDegree };
HotnessPolicy ParseHotnessPolicy(const std::string& name);  // presample | rpr | degree

// Access counts over batches [first_batch, first_batch + batches) of `sampler`.
ChargedArray<float> PresampleScores(KHopSampler& sampler, uint64_t num_nodes, uint64_t first_batch,
                                    uint64_t batches, MemoryBudget& budget);
// `iterations` rounds of reverse PageRank with damping `alpha`, restarting at `seeds`
// (every node when empty).
ChargedArray<float> ReversePageRankScores(const CscGraph& graph, std::span<const uint64_t> seeds,
                                          int iterations, double alpha, MemoryBudget& budget);
ChargedArray<float> DegreeScores(const CscGraph& graph, MemoryBudget& budget);

// The ids of the `count` highest scores, highest first (ties by smaller id).
std::vector<uint64_t> TopScored(const ChargedArray<float>& scores, uint64_t count,
                                MemoryBudget& budget);

}  // namespace strata
