#include "sampling/khop_sampler.h"

#include <algorithm>

#include "common/random.h"

namespace strata {

KHopSampler::KHopSampler(const CscGraph& graph, std::vector<uint64_t> seed_pool,
                         std::vector<int> fanouts, uint64_t batch_size, uint64_t seed,
                         MemoryBudget& budget)
    : graph_(graph),
      seed_pool_(std::move(seed_pool)),
      fanouts_(std::move(fanouts)),
      batch_size_(batch_size),
      seed_(seed),
      stamp_(budget, graph.num_nodes(), "the sampler's visit marks") {
  std::fill(stamp_.data(), stamp_.data() + stamp_.size(), 0);
}

std::vector<uint64_t> KHopSampler::Batch(uint64_t index) {
  if (++current_stamp_ == 0) {  // wrapped: clear the marks once every 2^32 batches
    std::fill(stamp_.data(), stamp_.data() + stamp_.size(), 0);
    current_stamp_ = 1;
  }
  Rng rng(MixSeed(seed_, index));
  std::vector<uint64_t> nodes;
  auto visit = [&](uint64_t v) {
    if (stamp_[v] != current_stamp_) {
      stamp_[v] = current_stamp_;
      nodes.push_back(v);
    }
  };
  const uint64_t pool = seed_pool_.empty() ? graph_.num_nodes() : seed_pool_.size();
  for (uint64_t i = 0; i < batch_size_ && pool > 0; ++i) {
    uint64_t pick = rng.Below(pool);
    visit(seed_pool_.empty() ? pick : seed_pool_[pick]);
  }
  size_t frontier_begin = 0;
  std::vector<uint64_t> chosen;
  for (auto layer = fanouts_.rbegin(); layer != fanouts_.rend(); ++layer) {
    const size_t frontier_end = nodes.size();
    for (size_t f = frontier_begin; f < frontier_end; ++f) {
      const uint64_t v = nodes[f];
      const uint64_t degree = graph_.InDegree(v);
      if (*layer < 0 || degree <= static_cast<uint64_t>(*layer)) {
        for (uint64_t k = 0; k < degree; ++k) visit(graph_.InNeighbor(v, k));
        continue;
      }
      // Floyd's algorithm: `fanout` distinct positions out of `degree`.
      chosen.clear();
      const uint64_t fanout = static_cast<uint64_t>(*layer);
      for (uint64_t j = degree - fanout; j < degree; ++j) {
        uint64_t t = rng.Below(j + 1);
        chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j);
      }
      for (uint64_t k : chosen) visit(graph_.InNeighbor(v, k));
    }
    frontier_begin = frontier_end;
  }
  return nodes;
}

}  // namespace strata
