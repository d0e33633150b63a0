// BinaryFeatureModel draws bag-of-words rows: each row has exactly `ones` distinct words set to
// 1 out of `dim`, drawn without replacement from its class's word distribution. Every class
// shares a Zipf background vocabulary (the word of rank r in a seeded permutation has weight
// 1/(r + 1)) and boosts its own topic, a seeded set of dim/classes words, by
// `topic_boost`. Rows are therefore wide, dense, unnormalised and only statistically
// class-dependent, like the co-purchase and citation bag-of-words that GNN recipes are tuned on.
//
// Deterministic: a row depends only on its class and the Rng it is given.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/random.h"

namespace strata {

class BinaryFeatureModel {
 public:
  // Per-thread working space for FillRow, reused across rows.
  struct Scratch {
    std::vector<float> keys;
    std::vector<uint32_t> words;
  };

  // Requires 0 < ones <= dim, classes >= 1, topic_boost >= 1.
  BinaryFeatureModel(uint64_t dim, uint32_t classes, uint64_t ones, double topic_boost,
                     uint64_t seed);

  // Writes one row of `dim` values (0 or 1) for a node of class `cls`.
  void FillRow(uint32_t cls, Rng& rng, std::span<float> row, Scratch& scratch) const;

 private:
  uint64_t dim_;
  uint64_t ones_;
  std::vector<float> inverse_weights_;  // classes x dim: 1 / (word weight under the class)
};

}  // namespace strata
