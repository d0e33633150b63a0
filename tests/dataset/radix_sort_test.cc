#include "dataset/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/random.h"

namespace strata {
namespace {

template <typename Key>
void ExpectSortsLikeStdSort(size_t n, int key_bits, uint64_t seed) {
  Rng rng(seed);
  std::vector<Key> keys(n), scratch(n);
  for (auto& k : keys) {
    Key wide = (static_cast<Key>(rng.Next()) << 64 % (8 * sizeof(Key))) ^ rng.Next();
    k = key_bits >= static_cast<int>(8 * sizeof(Key)) ? wide : wide & ((Key{1} << key_bits) - 1);
  }
  std::vector<Key> expected = keys;
  std::sort(expected.begin(), expected.end());
  RadixSort<Key>(keys, scratch, key_bits);
  EXPECT_TRUE(keys == expected) << "n=" << n << " bits=" << key_bits;
}

TEST(RadixSort, MatchesStdSortFor64BitKeys) {
  for (int bits : {1, 11, 12, 22, 33, 48, 64}) ExpectSortsLikeStdSort<uint64_t>(10007, bits, bits);
  ExpectSortsLikeStdSort<uint64_t>(0, 20, 1);
  ExpectSortsLikeStdSort<uint64_t>(1, 20, 1);
}

TEST(RadixSort, MatchesStdSortFor128BitKeys) {
  for (int bits : {20, 64, 80, 128}) {
    ExpectSortsLikeStdSort<unsigned __int128>(5003, bits, bits);
  }
}

TEST(RadixSort, HandlesKeysThatShareDigits) {
  // Keys differing only in their top digit: every lower pass is skipped.
  std::vector<uint64_t> keys = {3ull << 44, 1ull << 44, 2ull << 44, 1ull << 44};
  std::vector<uint64_t> scratch(keys.size());
  RadixSort<uint64_t>(keys, scratch, 46);
  EXPECT_EQ(keys, (std::vector<uint64_t>{1ull << 44, 1ull << 44, 2ull << 44, 3ull << 44}));
}

}  // namespace
}  // namespace strata
