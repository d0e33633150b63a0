// Test assertions on sampled batches, shared by the sampler's and the pipeline's tests.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace strata
