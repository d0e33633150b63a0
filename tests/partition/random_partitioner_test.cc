// RandomPartition: partitions of equal size (±1), dealt the same way for the same seed and
// another way for another.
#include "partition/random_partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace strata {
namespace {

TEST(RandomPartition, SizesDifferByAtMostOne) {
  MemoryBudget budget(1 << 20);
  for (uint64_t nodes : {1u, 10u, 1001u}) {
    for (uint32_t parts : {1u, 3u, 10u}) {
      if (parts > nodes) continue;
      const Partitioning p = RandomPartition(nodes, parts, 9, budget);
      std::vector<uint64_t> size(parts, 0);
      for (uint64_t v = 0; v < nodes; ++v) ++size[p.part_of[v]];
      EXPECT_LE(
          *std::max_element(size.begin(), size.end()) - *std::min_element(size.begin(), size.end()),
          1u);
    }
  }
}

TEST(RandomPartition, DealsEqualSeededPartitions) {
  MemoryBudget budget(uint64_t{1} << 20);
  const Partitioning a = RandomPartition(1003, 10, 7, budget);
  const Partitioning b = RandomPartition(1003, 10, 7, budget);
  const Partitioning c = RandomPartition(1003, 10, 8, budget);
  ASSERT_EQ(a.parts, 10u);
  std::vector<uint64_t> sizes(10, 0);
  uint64_t same_as_c = 0;
  for (uint64_t v = 0; v < 1003; ++v) {
    ASSERT_LT(a.part_of[v], 10u);
    ++sizes[a.part_of[v]];
    EXPECT_EQ(a.part_of[v], b.part_of[v]);
    same_as_c += a.part_of[v] == c.part_of[v];
  }
  EXPECT_EQ(*std::max_element(sizes.begin(), sizes.end()), 101u);  // 1003 = 3 × 101 + 7 × 100
  EXPECT_EQ(*std::min_element(sizes.begin(), sizes.end()), 100u);
  EXPECT_LT(same_as_c, 200u);  // another seed deals another way (chance: about a tenth)
}

}  // namespace
}  // namespace strata
