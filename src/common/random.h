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

  // Standard normal, Box-Muller; the second value of each pair is kept for the next call.
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = 1.0 - Uniform();  // in (0, 1], so log is finite
    double u2 = Uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2 * M_PI * u2);
    has_spare_ = true;
    return r * std::cos(2 * M_PI * u2);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace strata
