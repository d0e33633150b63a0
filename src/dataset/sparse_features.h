// SparseFeatureModel draws sparse bag-of-words rows for `strata generate --feature-density`:
// each row sets `ones` distinct words of `dim` to 1, each word drawn from the node's class
// topic (a seeded set of dim / classes words, uniformly) with probability `topic_share`, else
// from a Zipf background shared by all classes (the word of rank r in a seeded permutation has
// weight 1 / (r + 1)). A draw costs O(log dim), so a row costs O(ones log dim) whatever the
// dimension — the dense BinaryFeatureModel visits every word of every row, which 50,000-word
// rows cannot afford.
//
// Deterministic: a row depends only on its class and the Rng it is given.
#pragma once

#include <cstdint>
#include <vector>

#include "common/random.h"

namespace strata {

class SparseFeatureModel {
 public:
  // Requires 0 < ones <= dim / 8 (so that redrawing repeated words stays cheap), classes >= 1,
  // 0 <= topic_share <= 1.
  SparseFeatureModel(uint64_t dim, uint32_t classes, uint64_t ones, double topic_share,
                     uint64_t seed);

  // The row's words, ascending, into `columns` (replacing its contents).
  void DrawRow(uint32_t cls, Rng& rng, std::vector<uint32_t>& columns) const;

 private:
  uint32_t DrawWord(uint32_t cls, Rng& rng) const;

  uint64_t dim_;
  uint64_t ones_;
  double topic_share_;
  uint64_t topic_size_;
  std::vector<double> background_cdf_;  // by rank
  std::vector<uint32_t> word_of_rank_;  // background permutation
  std::vector<uint32_t> topic_words_;   // class c's topic: [c * topic_size_, (c+1) * topic_size_)
};

}  // namespace strata
