// BatchBound is the largest batch a neighbour sampler can produce on a graph, layer by layer:
// a layer's destinations are at most the layer above's sources, its edges at most the sum of
// the largest capped in-degrees over that many destinations (min(degree, fanout); the whole
// degree for a fanout of -1 or under LABOR, whose picks per node are random), and its sources
// at most its destinations plus its edges, and never more than the graph's nodes. The memory
// plan sizes the batches in flight and the model's buffers for it, so that no batch met later
// can need more than was planned.
//
// Invariant: every batch the sampler draws on this graph with these fanouts and at most this
// many seeds fits within the bound, layer by layer.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "nn/layer.h"
#include "strata/block.h"
#include "strata/graph.h"

namespace strata {

// A graph's in-degrees as (degree, node count) pairs, largest degree first: what the bound
// needs of the graph, a few thousand entries for any real graph.
class DegreeProfile {
 public:
  explicit DegreeProfile(const CscGraph& graph);
  // The sum of min(degree, cap) over the `count` nodes where it is largest.
  uint64_t TopCappedSum(uint64_t count, uint64_t cap) const;
  uint64_t num_nodes() const { return num_nodes_; }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> degrees_;  // descending degree
  uint64_t num_nodes_ = 0;
};

struct BatchBound {
  std::vector<BlockShape> layers;  // input layer first, like a batch's blocks
  bool edge_weights = false;       // LABOR's weight per edge

  uint64_t input_rows() const { return layers.empty() ? 0 : layers.front().src; }
  // Bytes a sampled batch of this bound can hold in its blocks' vectors (a vector filled by
  // appending may hold twice what it uses).
  uint64_t BlockBytes() const;
  // Its input features as the model takes them: input_rows() x dim float32 values.
  uint64_t FeatureBytes(uint64_t dim) const { return input_rows() * dim * sizeof(float); }
};

// Bytes a sampled batch's blocks hold, which BatchBound::BlockBytes bounds.
uint64_t BlockBytes(const SampledBatch& batch);

// The bound of a batch of at most `seeds` seeds sampled with `fanouts` (input layer first; -1
// takes every in-neighbour), with LABOR when `labor`.
BatchBound BoundBatch(const DegreeProfile& degrees, std::span<const int> fanouts, uint64_t seeds,
                      bool labor);

// Each layer's larger bound of the two: a model serving both kinds of batch grows its buffers
// to the larger of each dimension.
BatchBound LargerOfEach(const BatchBound& a, const BatchBound& b);

}  // namespace strata
