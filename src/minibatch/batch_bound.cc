#include "minibatch/batch_bound.h"

#include <algorithm>
#include <map>

namespace strata {

DegreeProfile::DegreeProfile(const CscGraph& graph) : num_nodes_(graph.num_nodes()) {
  // Small degrees, nearly every node's, are counted in an array; the few large ones in a map.
  constexpr uint64_t kDense = 4096;
  std::vector<uint64_t> dense(kDense, 0);
  std::map<uint64_t, uint64_t> sparse;
  for (uint64_t v = 0; v < num_nodes_; ++v) {
    const uint64_t degree = graph.InDegree(v);
    if (degree < kDense) {
      ++dense[degree];
    } else {
      ++sparse[degree];
    }
  }
  for (auto it = sparse.rbegin(); it != sparse.rend(); ++it) degrees_.push_back(*it);
  for (uint64_t d = kDense; d-- > 0;) {
    if (dense[d] > 0) degrees_.emplace_back(d, dense[d]);
  }
}

uint64_t DegreeProfile::TopCappedSum(uint64_t count, uint64_t cap) const {
  // Capping keeps the order, so the largest capped degrees are the largest degrees' caps.
  uint64_t sum = 0;
  for (const auto& [degree, nodes] : degrees_) {
    if (count == 0 || degree == 0) break;
    const uint64_t taken = std::min(count, nodes);
    sum += taken * std::min(degree, cap);
    count -= taken;
  }
  return sum;
}

uint64_t BatchBound::BlockBytes() const {
  uint64_t bytes = 0;
  for (const BlockShape& layer : layers) {
    bytes += 2 * layer.src * sizeof(uint64_t) + (layer.dst + 1) * sizeof(uint32_t) +
             2 * layer.edges * sizeof(uint32_t);
    if (edge_weights) bytes += layer.edges * sizeof(float);
  }
  return bytes;
}

uint64_t BlockBytes(const SampledBatch& batch) {
  uint64_t bytes = 0;
  for (const Block& block : batch.blocks) {
    bytes += block.src_nodes.capacity() * sizeof(uint64_t) +
             (block.indptr.capacity() + block.indices.capacity()) * sizeof(uint32_t) +
             block.edge_weights.capacity() * sizeof(float);
  }
  return bytes;
}

BatchBound BoundBatch(const DegreeProfile& degrees, std::span<const int> fanouts, uint64_t seeds,
                      bool labor) {
  BatchBound bound;
  bound.edge_weights = labor;
  bound.layers.resize(fanouts.size());
  const uint64_t n = degrees.num_nodes();
  uint64_t dst = std::min(seeds, n);
  for (size_t l = fanouts.size(); l-- > 0;) {
    // LABOR may keep every in-edge of a destination, unless its fanout keeps none.
    const bool whole = fanouts[l] < 0 || (labor && fanouts[l] > 0);
    const uint64_t cap = whole ? UINT64_MAX : static_cast<uint64_t>(fanouts[l]);
    BlockShape& layer = bound.layers[l];
    layer.dst = dst;
    layer.edges = degrees.TopCappedSum(dst, cap);
    layer.src = std::min(n, dst + layer.edges);
    dst = layer.src;
  }
  return bound;
}

BatchBound LargerOfEach(const BatchBound& a, const BatchBound& b) {
  BatchBound larger = a;
  larger.edge_weights = a.edge_weights || b.edge_weights;
  for (size_t l = 0; l < larger.layers.size() && l < b.layers.size(); ++l) {
    larger.layers[l].dst = std::max(a.layers[l].dst, b.layers[l].dst);
    larger.layers[l].src = std::max(a.layers[l].src, b.layers[l].src);
    larger.layers[l].edges = std::max(a.layers[l].edges, b.layers[l].edges);
  }
  return larger;
}

}  // namespace strata
