// The sparse structure that the message-passing kernels run over.
//
// BlockCsr is a view of one layer's edges as CSR by destination, the layout of a sampling
// Block: the sources of destination d are indices[indptr[d] .. indptr[d + 1]), and edge e
// (the e-th entry of indices) is how per-edge values (attention logits, weights) are
// indexed. BlockCsc is the same edges grouped by source, built when a backward pass must
// gather over a source's outgoing edges (the transposed SpMM, per-source sums of SDDMM
// gradients). Computing the transpose by grouping instead of by scatter-add keeps every
// output row owned by one thread and summed in one fixed order, so results do not depend on
// the thread count and no atomics are needed.
//
// Invariants: indptr has num_dst + 1 entries, starts at 0, is non-decreasing and ends at the
// edge count; every source index < num_src; weights are empty or one per edge. A BlockCsc lists the
// edges of each source in increasing edge id (hence destination) order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/block.h"

namespace strata {

struct BlockCsr {
  uint32_t num_dst = 0;
  uint32_t num_src = 0;
  std::span<const uint32_t> indptr;
  std::span<const uint32_t> indices;
  // Empty, or one per edge: the block's edge_weights (LABOR's inverse inclusion probabilities),
  // which SAGE's mean, GCN's sum and GAT's attention weigh their edges by.
  std::span<const float> weights;

  uint64_t num_edges() const { return indices.size(); }
};

// The block's edges as a BlockCsr. Throws strata::Error when the block breaks its invariants
// (a wrong indptr size or end, num_dst > num_src); source ids are checked by CheckCsr.
BlockCsr CsrOf(const Block& block);

// Throws strata::Error unless `graph` satisfies the invariants above. O(edges); the layers
// call it once per forward so that a malformed block fails loudly instead of reading out of
// bounds.
void CheckCsr(const BlockCsr& graph);

// Edges grouped by source.
struct BlockCsc {
  uint32_t num_src = 0;
  uint32_t num_dst = 0;
  std::vector<uint32_t>
      indptr;                  // num_src + 1: the edges of source s are [indptr[s], indptr[s + 1])
  std::vector<uint32_t> dst;   // destination of each grouped edge
  std::vector<uint32_t> edge;  // its edge id in the CSR
  std::span<const float> weights;  // the CSR's, indexed by CSR edge id

  // Rebuilds from `csr` (a stable counting sort), reusing the vectors' capacity.
  void Build(const BlockCsr& csr);
  size_t allocated_bytes() const {
    return (indptr.capacity() + dst.capacity() + edge.capacity()) * sizeof(uint32_t);
  }
};

// A CSR whose every destination d also has itself (local id d) as its last source: the
// self loop that GAT adds so that a node attends to its own features. Owns its arrays; view
// it with graph().
class SelfLoopCsr {
 public:
  void Build(const BlockCsr& csr);
  BlockCsr graph() const { return {num_dst_, num_src_, indptr_, indices_, {}}; }
  size_t allocated_bytes() const {
    return (indptr_.capacity() + indices_.capacity()) * sizeof(uint32_t);
  }

 private:
  uint32_t num_dst_ = 0;
  uint32_t num_src_ = 0;
  std::vector<uint32_t> indptr_;
  std::vector<uint32_t> indices_;
};

// Splits destinations [0, num_dst) of `indptr` (num_dst + 1 offsets of any width, counted from
// indptr[0]: a block of a larger CSR too) into `parts` contiguous ranges of about equal work
// (edges plus one per destination): bounds[p] .. bounds[p + 1] is part p.
template <typename Offset>
std::vector<uint64_t> SplitByEdges(std::span<const Offset> indptr, unsigned parts) {
  const uint64_t num_dst = indptr.size() - 1;
  parts = std::max(1u, parts);
  std::vector<uint64_t> bounds(parts + 1, num_dst);
  bounds[0] = 0;
  // Work before destination d.
  auto work = [&](uint64_t d) { return uint64_t{indptr[d]} - uint64_t{indptr[0]} + d; };
  const uint64_t total = work(num_dst);
  uint64_t d = 0;
  for (unsigned p = 1; p < parts; ++p) {
    const uint64_t target = total * p / parts;
    while (d < num_dst && work(d) < target) ++d;
    bounds[p] = d;
  }
  return bounds;
}

}  // namespace strata
