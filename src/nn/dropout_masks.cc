#include "nn/dropout_masks.h"

#include <algorithm>

#include "common/random.h"
#include "nn/row_ops.h"

namespace strata {
namespace {

inline uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

template <typename T>
STRATA_NN_CLONES void FillRowMasks(uint64_t seed, RowKeys keys, size_t rows, size_t cols,
                                   uint32_t threshold, T scale, T* masks, size_t first_column) {
  // xoshiro256** states of the rows, as Rng seeds them; lanes past `rows` repeat the last
  // row's stream and are never stored.
  uint64_t s0[kMaskRows], s1[kMaskRows], s2[kMaskRows], s3[kMaskRows];
  for (size_t r = 0; r < kMaskRows; ++r) {
    uint64_t state = MixSeed(seed, keys[std::min(r, rows - 1)]);
    s0[r] = SplitMix64(state);
    s1[r] = SplitMix64(state);
    s2[r] = SplitMix64(state);
    s3[r] = SplitMix64(state);
  }
  uint64_t out[kMaskRows];
  const size_t end = first_column + cols;
  for (size_t j = 0; j < end; j += 4) {
    for (size_t r = 0; r < kMaskRows; ++r) {  // Rng::Next, one step of every lane
      const uint64_t a = s0[r], b = s1[r], c = s2[r] ^ a, d = s3[r] ^ b;
      out[r] = Rotl(b * 5, 7) * 9;
      s0[r] = a ^ d;
      s1[r] = b ^ c;
      s2[r] = c ^ (b << 17);
      s3[r] = Rotl(d, 45);
    }
    if (j + 4 <= first_column) continue;
    // Draws j.. of this output; those before first_column are skipped.
    const size_t from = std::max(j, first_column), n = std::min<size_t>(j + 4, end) - from;
    for (size_t r = 0; r < rows; ++r) {
      uint64_t bits = out[r] >> (16 * (from - j));
      T* mask = masks + r * cols + (from - first_column);
      for (size_t k = 0; k < n; ++k, bits >>= 16) {
        // Without a branch: half the draws go each way, so a branch would mispredict half
        // the time and cost more than everything else here.
        mask[k] = KeepIf(static_cast<uint32_t>(bits & 0xFFFF) >= threshold, scale);
      }
    }
  }
}

template void FillRowMasks<float>(uint64_t, RowKeys, size_t, size_t, uint32_t, float, float*,
                                  size_t);
template void FillRowMasks<double>(uint64_t, RowKeys, size_t, size_t, uint32_t, double, double*,
                                   size_t);

}  // namespace strata
