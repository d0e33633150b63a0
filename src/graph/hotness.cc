#include "graph/hotness.h"

#include <algorithm>
#include <numeric>

#include "strata/error.h"

namespace strata {

ChargedArray<float> PresampleScores(const PresampleBatch& batch, uint64_t batches,
                                    uint64_t num_nodes, MemoryBudget& budget) {
  ChargedArray<float> counts(budget, num_nodes, "hotness scores");
  std::fill(counts.data(), counts.data() + num_nodes, 0.0f);
  for (uint64_t b = 0; b < batches; ++b) {
    for (uint64_t v : batch(b)) counts[v] += 1;
  }
  return counts;
}

ChargedArray<float> ReversePageRankScores(const CscGraph& graph, std::span<const uint64_t> seeds,
                                          int iterations, double alpha, MemoryBudget& budget) {
  const uint64_t n = graph.num_nodes();
  ChargedArray<float> rank(budget, n, "hotness scores");
  ChargedArray<float> next(budget, n, "reverse PageRank scratch");
  ChargedArray<float> restart(budget, n, "reverse PageRank restart vector");
  std::fill(restart.data(), restart.data() + n, seeds.empty() ? 1.0f / n : 0.0f);
  for (uint64_t s : seeds) restart[s] += 1.0f / seeds.size();
  std::copy(restart.data(), restart.data() + n, rank.data());
  for (int it = 0; it < iterations; ++it) {
    double dangling = 0;
    std::fill(next.data(), next.data() + n, 0.0f);
    // A destination hands its rank to its in-neighbours, as sampling walks from a node to
    // the neighbours whose features it reads.
    for (uint64_t v = 0; v < n; ++v) {
      if (graph.InDegree(v) == 0) dangling += rank[v];
    }
    uint64_t v = 0;  // the destination of the next edge
    graph.ForEachSourceChunk([&](uint64_t first_edge, std::span<const uint64_t> sources) {
      for (uint64_t i = 0; i < sources.size(); ++i) {
        const uint64_t e = first_edge + i;
        while (e >= graph.EdgeBegin(v) + graph.InDegree(v)) ++v;
        next[sources[i]] += static_cast<float>(rank[v] / graph.InDegree(v));
      }
    });
    for (uint64_t v = 0; v < n; ++v) {
      next[v] = static_cast<float>(alpha * next[v] + (1 - alpha + alpha * dangling) * restart[v]);
    }
    std::swap(rank, next);
  }
  return rank;
}

ChargedArray<float> DegreeScores(const CscGraph& graph, MemoryBudget& budget) {
  ChargedArray<float> counts(budget, graph.num_nodes(), "hotness scores");
  std::fill(counts.data(), counts.data() + graph.num_nodes(), 0.0f);
  graph.ForEachSourceChunk([&](uint64_t, std::span<const uint64_t> sources) {
    for (uint64_t s : sources) counts[s] += 1;
  });
  return counts;
}

ChargedArray<float> HotnessScores(HotnessPolicy policy, const CscGraph& graph,
                                  std::span<const uint64_t> seeds, const PresampleBatch& batch,
                                  uint64_t presample_batches, MemoryBudget& budget) {
  switch (policy) {
    case HotnessPolicy::kPresample:
      return PresampleScores(batch, presample_batches, graph.num_nodes(), budget);
    case HotnessPolicy::kReversePageRank:
      return ReversePageRankScores(graph, seeds, 20, 0.85, budget);
    case HotnessPolicy::kDegree:
      return DegreeScores(graph, budget);
  }
  throw Error::Internal("unknown hotness policy");
}

std::vector<uint64_t> TopScored(const ChargedArray<float>& scores, uint64_t count,
                                MemoryBudget& budget) {
  const uint64_t n = scores.size();
  count = std::min(count, n);
  if (count == 0) return {};
  // Select by threshold: the count-th largest score, then everything above it, then ties
  // at it by id; avoids sorting all n ids.
  ChargedArray<float> copy(budget, n, "hotness ranking scratch");
  std::copy(scores.data(), scores.data() + n, copy.data());
  std::nth_element(copy.data(), copy.data() + (count - 1), copy.data() + n, std::greater<float>());
  const float threshold = copy[count - 1];
  std::vector<uint64_t> ids;
  ids.reserve(count);
  for (uint64_t v = 0; v < n; ++v) {
    if (scores[v] > threshold) ids.push_back(v);
  }
  for (uint64_t v = 0; v < n && ids.size() < count; ++v) {
    if (scores[v] == threshold) ids.push_back(v);
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [&](uint64_t a, uint64_t b) { return scores[a] > scores[b]; });
  return ids;
}

}  // namespace strata
