// Test assertions on sampled batches, shared by the sampler's and the pipeline's tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "strata/graph.h"
#include "strata/neighbor_sampler.h"

namespace strata {

// Two batches are the same: epoch, index and every layer's block, array for array.
inline void ExpectSameBatch(const SampledBatch& a, const SampledBatch& b) {
  ASSERT_EQ(a.epoch, b.epoch);
  ASSERT_EQ(a.index, b.index);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_EQ(a.blocks[l].src_nodes, b.blocks[l].src_nodes) << "layer " << l;
    EXPECT_EQ(a.blocks[l].dst_count, b.blocks[l].dst_count) << "layer " << l;
    EXPECT_EQ(a.blocks[l].indptr, b.blocks[l].indptr) << "layer " << l;
    EXPECT_EQ(a.blocks[l].indices, b.blocks[l].indices) << "layer " << l;
  }
}

inline bool IsInNeighbor(const CscGraph& graph, uint64_t v, uint64_t u) {
  for (uint64_t k = 0; k < graph.InDegree(v); ++k) {
    if (graph.InNeighbor(v, k) == u) return true;
  }
  return false;
}

// Everything a batch must satisfy: the Block invariants, the chain between layers, every edge
// a real in-edge, and per destination min(fanout, degree) distinct sources in ascending
// global id (with !exact_fanouts, as LABOR samples: all of them when degree <= fanout, any
// number otherwise).
inline void ExpectValidBatch(const CscGraph& graph, const SampledBatch& batch,
                             const std::vector<int>& fanouts, const std::vector<uint64_t>& seeds,
                             bool exact_fanouts = true) {
  ASSERT_EQ(batch.blocks.size(), fanouts.size());
  EXPECT_EQ(batch.seeds(), seeds);
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    SCOPED_TRACE(::testing::Message() << "layer " << l);
    const Block& b = batch.blocks[l];
    if (l + 1 < batch.blocks.size()) {
      ASSERT_EQ(b.num_dst(), batch.blocks[l + 1].num_src());
      ASSERT_TRUE(std::equal(b.src_nodes.begin(), b.src_nodes.begin() + b.num_dst(),
                             batch.blocks[l + 1].src_nodes.begin()));
    }
    ASSERT_LE(b.num_dst(), b.num_src());
    ASSERT_EQ(b.indptr.size(), b.num_dst() + 1u);
    ASSERT_EQ(b.indptr.front(), 0u);
    ASSERT_EQ(b.indptr.back(), b.indices.size());
    std::set<uint64_t> distinct(b.src_nodes.begin(), b.src_nodes.end());
    ASSERT_EQ(distinct.size(), b.src_nodes.size());
    std::vector<bool> used(b.num_src(), false);
    for (uint32_t d = 0; d < b.num_dst(); ++d) {
      ASSERT_LE(b.indptr[d], b.indptr[d + 1]);
      const uint64_t v = b.src_nodes[d];
      const uint64_t degree = graph.InDegree(v);
      const uint64_t expected =
          fanouts[l] < 0 ? degree : std::min<uint64_t>(degree, static_cast<uint64_t>(fanouts[l]));
      if (exact_fanouts || expected == degree) {
        ASSERT_EQ(b.indptr[d + 1] - b.indptr[d], expected) << "node " << v;
      }
      uint64_t previous = 0;
      for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
        ASSERT_LT(b.indices[e], b.num_src());
        used[b.indices[e]] = true;
        const uint64_t u = b.src_nodes[b.indices[e]];
        ASSERT_TRUE(IsInNeighbor(graph, v, u)) << u << " -> " << v;
        if (e > b.indptr[d]) {
          ASSERT_LT(previous, u) << "sources not distinct and ascending";
        }
        previous = u;
      }
    }
    // Local ids by first appearance: each new source first appears right after the last.
    uint32_t next_new = b.num_dst();
    for (uint32_t idx : b.indices) {
      if (idx >= next_new) {
        ASSERT_EQ(idx, next_new);
        ++next_new;
      }
    }
    ASSERT_EQ(next_new, b.num_src());
  }
}

}  // namespace strata
