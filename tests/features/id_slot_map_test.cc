#include "features/id_slot_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/random.h"
#include "strata/error.h"

namespace strata {
namespace {

TEST(IdSlotMap, MatchesUnorderedMapOverMillionRandomOps) {
  constexpr size_t kMaxEntries = 20000;
  constexpr uint64_t kUniverse = 60000;  // small enough that finds and erases often hit
  IdSlotMap map(kMaxEntries);
  std::unordered_map<uint64_t, uint32_t> reference;
  Rng rng(42);
  for (int op = 0; op < 1000000; ++op) {
    // Spread ids over the whole 64-bit range, including the top bit, through a fixed bijection.
    uint64_t id = rng.Below(kUniverse) * 0x9E3779B97F4A7C15ull;
    uint64_t choice = rng.Below(10);
    auto it = reference.find(id);
    if (choice < 4) {
      if (it == reference.end() && reference.size() < kMaxEntries) {
        uint32_t slot = static_cast<uint32_t>(rng.Below(IdSlotMap::kNoSlot));
        map.Insert(id, slot);
        reference.emplace(id, slot);
      }
    } else if (choice < 7) {
      ASSERT_EQ(map.Erase(id), it != reference.end()) << "op " << op;
      if (it != reference.end()) reference.erase(it);
    } else {
      uint32_t expected = it == reference.end() ? IdSlotMap::kNoSlot : it->second;
      ASSERT_EQ(map.Find(id), expected) << "op " << op;
    }
    ASSERT_EQ(map.size(), reference.size());
    if (op % 100000 == 0) {
      for (const auto& [key, slot] : reference) ASSERT_EQ(map.Find(key), slot);
    }
  }
  for (const auto& [key, slot] : reference) ASSERT_EQ(map.Find(key), slot);
}

// Ids whose home buckets collide and cluster, including runs that wrap past the end of the
// table, are where backward-shift deletion can lose an entry if the "may this entry move back"
// test is wrong.
TEST(IdSlotMap, EraseWithBackwardShiftKeepsOtherEntriesFindable) {
  constexpr size_t kMaxEntries = 32;
  IdSlotMap probe(kMaxEntries);
  const size_t table_size = probe.bytes() / 16;  // 16-byte entries
  ASSERT_GE(table_size, 2 * kMaxEntries);
  const uint64_t mask = table_size - 1;
  // Homes concentrated on the last two buckets and the first: the probe run wraps around.
  std::vector<uint64_t> ids;
  for (uint64_t candidate = 0; ids.size() < kMaxEntries; ++candidate) {
    uint64_t home = IdSlotMap::Mix(candidate) & mask;
    if (home >= mask - 1 || home <= 1) ids.push_back(candidate);
  }
  Rng rng(7);
  for (int round = 0; round < 200; ++round) {
    IdSlotMap map(kMaxEntries);
    std::vector<uint64_t> order = ids;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
    for (size_t i = 0; i < order.size(); ++i) map.Insert(order[i], static_cast<uint32_t>(i));
    std::vector<uint64_t> erase_order = ids;
    for (size_t i = erase_order.size(); i > 1; --i) {
      std::swap(erase_order[i - 1], erase_order[rng.Below(i)]);
    }
    for (size_t e = 0; e < erase_order.size(); ++e) {
      ASSERT_TRUE(map.Erase(erase_order[e]));
      ASSERT_FALSE(map.Contains(erase_order[e]));
      ASSERT_FALSE(map.Erase(erase_order[e]));
      for (size_t k = e + 1; k < erase_order.size(); ++k) {
        uint64_t id = erase_order[k];
        size_t inserted_at = std::find(order.begin(), order.end(), id) - order.begin();
        ASSERT_EQ(map.Find(id), inserted_at) << "round " << round << " after erasing " << e + 1;
      }
    }
    EXPECT_EQ(map.size(), 0u);
  }
}

TEST(IdSlotMap, SizesTableAtLeastTwiceMaxEntriesAsPowerOfTwo) {
  for (size_t max_entries : {0, 1, 3, 100, 1024, 1025}) {
    IdSlotMap map(max_entries);
    size_t table_size = map.bytes() / 16;
    EXPECT_GE(table_size, 2 * max_entries);
    EXPECT_EQ(table_size & (table_size - 1), 0u);
    EXPECT_EQ(map.max_entries(), max_entries);
  }
}

TEST(IdSlotMap, RejectsDuplicateOverfullAndReservedSlot) {
  IdSlotMap map(2);
  map.Insert(UINT64_MAX, 0);  // every id value is storable, including all ones
  EXPECT_THROW(map.Insert(UINT64_MAX, 1), Error);
  EXPECT_THROW(map.Insert(5, IdSlotMap::kNoSlot), Error);
  map.Insert(0, IdSlotMap::kNoSlot - 1);
  EXPECT_THROW(map.Insert(7, 2), Error);
  EXPECT_EQ(map.Find(UINT64_MAX), 0u);
  EXPECT_EQ(map.Find(0), IdSlotMap::kNoSlot - 1);
  EXPECT_EQ(map.size(), 2u);
}

TEST(IdSlotMap, ClearEmptiesTheMapForReuse) {
  IdSlotMap map(100);
  for (uint64_t id = 0; id < 100; ++id) map.Insert(id, static_cast<uint32_t>(id));
  map.Clear();
  EXPECT_EQ(map.size(), 0u);
  for (uint64_t id = 0; id < 100; ++id) EXPECT_FALSE(map.Contains(id));
  for (uint64_t id = 0; id < 100; ++id) map.Insert(id + 1000, static_cast<uint32_t>(id));
  for (uint64_t id = 0; id < 100; ++id) EXPECT_EQ(map.Find(id + 1000), id);
}

}  // namespace
}  // namespace strata
