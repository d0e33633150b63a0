// PartitionLookup agrees with a binary search over the offsets for every id, with empty
// partitions, partitions smaller and larger than its buckets, and a single partition.
#include "multistage/partition_lookup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/random.h"

namespace strata {
namespace {

void ExpectAgreesWithBinarySearch(const std::vector<uint64_t>& offsets) {
  MemoryBudget budget(uint64_t{64} << 20);
  const PartitionLookup lookup(offsets, budget);
  for (uint64_t v = 0; v < offsets.back(); ++v) {
    const auto expected = std::upper_bound(offsets.begin(), offsets.end(), v) - offsets.begin() - 1;
    ASSERT_EQ(lookup(v), expected) << "node " << v;
  }
}

TEST(PartitionLookup, AgreesWithBinarySearch) {
  ExpectAgreesWithBinarySearch({0, 1000});
  ExpectAgreesWithBinarySearch({0, 0, 3, 3, 3, 70, 200, 201, 1000, 1000});
  Rng rng(7);
  std::vector<uint64_t> offsets = {0};
  for (int p = 0; p < 300; ++p) offsets.push_back(offsets.back() + rng.Below(150));
  ExpectAgreesWithBinarySearch(offsets);
}

}  // namespace
}  // namespace strata
