// Least-significant-digit radix sort of unsigned integer keys (uint64_t or unsigned __int128),
// the sort behind CSC building: linear in the number of keys, 11-bit digits so that each
// histogram fits in L1, and passes whose digit is the same for every key are skipped, so keys
// that use few bits cost few passes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace strata {

// Sorts `keys` ascending. All keys must be < 2^key_bits. `scratch` must be at least as long as
// `keys`; its contents are overwritten. The result is in `keys`.
template <typename Key>
void RadixSort(std::span<Key> keys, std::span<Key> scratch, int key_bits) {
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  const size_t n = keys.size();
  if (n < 2) return;
  const int passes = std::max(1, (key_bits + kDigitBits - 1) / kDigitBits);
  std::vector<std::array<uint64_t, kBuckets>> counts(passes);
  for (auto& c : counts) c.fill(0);
  for (size_t i = 0; i < n; ++i) {
    Key k = keys[i];
    for (int p = 0; p < passes; ++p) {
      ++counts[p][static_cast<size_t>(k >> (p * kDigitBits)) & (kBuckets - 1)];
    }
  }
  Key* src = keys.data();
  Key* dst = scratch.data();
  for (int p = 0; p < passes; ++p) {
    auto& count = counts[p];
    if (std::any_of(count.begin(), count.end(), [n](uint64_t c) { return c == n; })) continue;
    uint64_t offset = 0;
    for (auto& c : count) {
      uint64_t here = c;
      c = offset;
      offset += here;
    }
    const int shift = p * kDigitBits;
    for (size_t i = 0; i < n; ++i) {
      Key k = src[i];
      dst[count[static_cast<size_t>(k >> shift) & (kBuckets - 1)]++] = k;
    }
    std::swap(src, dst);
  }
  if (src != keys.data()) std::memcpy(keys.data(), src, n * sizeof(Key));
}

}  // namespace strata
