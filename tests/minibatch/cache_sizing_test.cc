#include "minibatch/cache_sizing.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

// make run's shape: 4 M nodes of 256 float32 features, a 1000-seed SAGE batch reading about
// 60 K rows, run-ahead 8, 256 reads of up to 64 KiB in flight.
CacheSizingInputs MakeRunShape(uint64_t available_bytes) {
  CacheSizingInputs in;
  in.num_nodes = 4'000'000;
  in.feature_dim = 256;
  in.row_bytes = 1024;
  in.widest_batch_rows = 60'000;
  in.max_run_ahead = 8;
  in.io_depth = 256;
  in.max_read_bytes = 64 << 10;
  in.hot_share = 0.5;
  in.available_bytes = available_bytes;
  return in;
}

TEST(CacheSizing, HalfOfWhatIsLeftAfterTheBatchesInFlight) {
  const CacheSizingInputs in = MakeRunShape(uint64_t{2} << 30);
  // Ten batch matrices and the read buffers.
  const uint64_t reserve = 10 * 60'000 * 256 * 4 + 256 * 65536;
  const uint64_t cache_rows = ((uint64_t{2} << 30) - reserve) / 2 / 1024;
  const CacheSizes sizes = SizeFeatureCache(in);
  EXPECT_EQ(sizes.hot_rows, cache_rows / 2);
  EXPECT_EQ(sizes.hot_rows + sizes.dynamic_rows, cache_rows);
  // Two entries per id of the nine batches in the window.
  EXPECT_EQ(sizes.max_pinned_ids, 2 * 9 * 60'000u);
}

TEST(CacheSizing, NoCacheWhenTheBatchesInFlightTakeTheWholeBudget) {
  const CacheSizes sizes = SizeFeatureCache(MakeRunShape(uint64_t{64} << 20));
  EXPECT_EQ(sizes.hot_rows, 0u);
  EXPECT_EQ(sizes.dynamic_rows, 0u);
  EXPECT_EQ(sizes.max_pinned_ids, 0u);  // no dynamic tier, no pin table
}

TEST(CacheSizing, NeverMoreThanTheFeatureFile) {
  CacheSizingInputs in = MakeRunShape(uint64_t{1} << 40);
  in.num_nodes = 100'000;
  in.hot_share = 0.25;
  const CacheSizes sizes = SizeFeatureCache(in);
  EXPECT_EQ(sizes.hot_rows + sizes.dynamic_rows, 100'000u);
  EXPECT_EQ(sizes.hot_rows, 25'000u);
  // The pin table never has more entries than there are nodes.
  EXPECT_EQ(sizes.max_pinned_ids, 100'000u);
}

TEST(CacheSizing, AFractionOfTheFeatureBytesIgnoresTheBudget) {
  CacheSizingInputs in = MakeRunShape(0);
  in.cache_fraction = 0.1;
  in.hot_share = 1;
  const CacheSizes sizes = SizeFeatureCache(in);
  EXPECT_EQ(sizes.hot_rows, 400'000u);
  EXPECT_EQ(sizes.dynamic_rows, 0u);
  EXPECT_EQ(sizes.max_pinned_ids, 0u);
}

TEST(CacheSizing, BatchesAReserveHoldsAreNotProvidedForTwice) {
  CacheSizingInputs all = MakeRunShape(uint64_t{2} << 30);
  CacheSizingInputs three_reserved = all;
  three_reserved.reserved_batches = 3;
  const uint64_t all_rows = SizeFeatureCache(all).dynamic_rows * 2;
  const uint64_t fewer_rows = SizeFeatureCache(three_reserved).dynamic_rows * 2;
  // Three batch matrices fewer to provide for, half of which goes to the cache.
  EXPECT_EQ(fewer_rows - all_rows, 3 * 60'000 * 256 * 4 / 2 / 1024);
  // A reserve holding every batch in flight leaves only the read buffers.
  three_reserved.reserved_batches = 20;
  EXPECT_EQ(SizeFeatureCache(three_reserved).dynamic_rows * 2,
            ((uint64_t{2} << 30) - 256 * 65536) / 2 / 1024);
}

}  // namespace
}  // namespace strata
