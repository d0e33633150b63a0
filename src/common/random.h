// Small, fast, seedable random numbers for generators and sampling. Rng is xoshiro256**
// seeded through SplitMix64; MixSeed derives independent streams from (seed, index) so that
// work split across threads draws the same numbers whatever the split.
#pragma once

#include <cmath>
#include <cstdint>

namespace strata {

inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A well-mixed 64-bit value of (seed, index): the seed of the index-th independent stream.
inline uint64_t MixSeed(uint64_t seed, uint64_t index) {
  uint64_t state = seed ^ (index * 0xD1B54A32D192ED03ull);
  SplitMix64(state);
  return SplitMix64(state);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t state = seed;
    for (auto& word : s_) word = SplitMix64(state);
  }

  uint64_t Next() {
    uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n) without modulo bias worth caring about (Lemire's multiply-shift).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

  // Standard normal by Marsaglia and Tsang's ziggurat (128 layers, common/random.cc): one
  // 64-bit draw, a table lookup and a multiply for 98.8% of values; Box-Muller's log, sqrt
  // and sine made generating a 100M-node graph's features CPU-bound. The layer comes from the
  // low 7 bits and the magnitude from the high 32, so the two are independent.
  double Normal() {
    const uint64_t u = Next();
    const uint32_t layer = u & 127;
    const int32_t j = static_cast<int32_t>(u >> 32);
    const ZigguratTables& z = Ziggurat();
    if (static_cast<uint32_t>(j < 0 ? -static_cast<int64_t>(j) : j) < z.k[layer]) {
      return j * z.w[layer];
    }
    return NormalEdge(layer, j);
  }

 private:
  struct ZigguratTables {
    uint32_t k[128];  // |j| below k[i]: j * w[i] lies inside layer i's rectangle
    double w[128];    // layer i's width over 2^31
    double f[128];    // the density at layer i's edge
  };
  static const ZigguratTables& Ziggurat();
  // The rare case: the tail past the base layer's edge, or the wedge beside a rectangle.
  double NormalEdge(uint32_t layer, int32_t j);

  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace strata
