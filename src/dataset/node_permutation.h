// NodePermutation is a pseudo-random bijection of [0, n) computable in O(1) memory in both
// directions: a 4-round Feistel network on the smallest even-bit domain covering n, with
// cycle walking to stay inside [0, n). Generators use it to scatter structured positions
// (hubs first, classes interleaved) over node ids, so that no id range is special.
#pragma once

#include <cstdint>

namespace strata {

class NodePermutation {
 public:
  NodePermutation(uint64_t n, uint64_t seed);

  uint64_t Forward(uint64_t x) const;
  uint64_t Inverse(uint64_t y) const;

 private:
  uint64_t Round(uint64_t half, int round) const;
  uint64_t Encrypt(uint64_t x) const;
  uint64_t Decrypt(uint64_t y) const;

  uint64_t n_;
  int half_bits_;
  uint64_t half_mask_;
  uint64_t keys_[4];
};

}  // namespace strata
