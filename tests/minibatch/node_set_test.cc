// NodeSet's members, ranks and iteration agree with a sorted list of distinct ids, across word
// boundaries and for a copy grown further.
#include "minibatch/node_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/random.h"
#include "strata/error.h"

namespace strata {
namespace {

void ExpectSameMembers(const NodeSet& set, std::vector<uint64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ASSERT_EQ(set.size(), ids.size());
  for (uint64_t r = 0; r < ids.size(); ++r) ASSERT_EQ(set.Rank(ids[r]), r) << ids[r];
  for (uint64_t v = 0; v < set.num_nodes(); ++v) {
    ASSERT_EQ(set.Contains(v), std::binary_search(ids.begin(), ids.end(), v)) << v;
  }
  std::vector<uint64_t> listed;
  set.ForEach(0, set.num_nodes(), [&](uint64_t v) { listed.push_back(v); });
  EXPECT_EQ(listed, ids);
  // A range starting and ending inside words.
  listed.clear();
  set.ForEach(70, 1000, [&](uint64_t v) { listed.push_back(v); });
  std::vector<uint64_t> inside;
  std::copy_if(ids.begin(), ids.end(), std::back_inserter(inside),
               [](uint64_t v) { return v >= 70 && v < 1000; });
  EXPECT_EQ(listed, inside);
}

TEST(NodeSet, RanksAndIterationFollowIdOrder) {
  MemoryBudget budget(uint64_t{1} << 20);
  Rng rng(3);
  std::vector<uint64_t> ids = {0, 63, 64, 1999, 127, 128, 63};
  for (int i = 0; i < 300; ++i) ids.push_back(rng.Below(2000));
  const NodeSet set = NodeSetOf(ids, 2000, budget, "test set");
  ExpectSameMembers(set, ids);

  NodeSet grown(set, budget, "test set");
  for (uint64_t v = 500; v < 700; ++v) grown.Insert(v);
  grown.Finish();
  for (uint64_t v = 500; v < 700; ++v) ids.push_back(v);
  ExpectSameMembers(grown, ids);
  EXPECT_EQ(budget.used(), 2 * 2 * ((2000 + 63) / 64) * sizeof(uint64_t));
}

TEST(NodeSet, RefusesAnIdOutsideTheGraph) {
  MemoryBudget budget(uint64_t{1} << 20);
  const std::vector<uint64_t> ids = {5, 100};
  EXPECT_THROW(NodeSetOf(ids, 100, budget, "test set"), Error);
}

}  // namespace
}  // namespace strata
