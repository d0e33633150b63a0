#include "dataset/node_permutation.h"

#include "common/random.h"

namespace strata {

NodePermutation::NodePermutation(uint64_t n, uint64_t seed) : n_(n) {
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  if (bits % 2) ++bits;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  for (int i = 0; i < 4; ++i) keys_[i] = MixSeed(seed, 0xFE15 + i);
}

uint64_t NodePermutation::Round(uint64_t half, int round) const {
  uint64_t state = half ^ keys_[round];
  return SplitMix64(state) & half_mask_;
}

uint64_t NodePermutation::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int r = 0; r < 4; ++r) {
    uint64_t next = left ^ Round(right, r);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t NodePermutation::Decrypt(uint64_t y) const {
  uint64_t left = y >> half_bits_, right = y & half_mask_;
  for (int r = 3; r >= 0; --r) {
    uint64_t prev = right ^ Round(left, r);
    right = left;
    left = prev;
  }
  return (left << half_bits_) | right;
}

// Cycle walking: the domain is at most 4n, so a few steps on average reach [0, n) again.
uint64_t NodePermutation::Forward(uint64_t x) const {
  do x = Encrypt(x);
  while (x >= n_);
  return x;
}

uint64_t NodePermutation::Inverse(uint64_t y) const {
  do y = Decrypt(y);
  while (y >= n_);
  return y;
}

}  // namespace strata
