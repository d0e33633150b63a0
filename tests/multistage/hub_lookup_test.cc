// HubLookup gives each hub its index in the hub list, whatever the list's order, and -1 for
// every other node, including ids at word boundaries and the last node.
#include "multistage/hub_lookup.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "common/random.h"

namespace strata {
namespace {

TEST(HubLookup, GivesEveryHubItsIndexAndOthersMinusOne) {
  constexpr uint64_t kNodes = 5000;
  Rng rng(3);
  std::vector<uint64_t> hubs = {4999, 0, 63, 64, 127, 128};
  std::map<uint64_t, int64_t> index;
  for (uint64_t h = 0; h < hubs.size(); ++h) index[hubs[h]] = static_cast<int64_t>(h);
  while (hubs.size() < 400) {
    const uint64_t v = rng.Below(kNodes);
    if (index.emplace(v, static_cast<int64_t>(hubs.size())).second) hubs.push_back(v);
  }
  MemoryBudget budget(uint64_t{64} << 20);
  const HubLookup lookup(hubs, kNodes, budget);
  for (uint64_t v = 0; v < kNodes; ++v) {
    auto it = index.find(v);
    ASSERT_EQ(lookup(v), it == index.end() ? -1 : it->second) << "node " << v;
  }
  const HubLookup none({}, kNodes, budget);
  EXPECT_EQ(none(0), -1);
  EXPECT_EQ(none(kNodes - 1), -1);
}

}  // namespace
}  // namespace strata
