#include "dataset/binary_features.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace strata {

BinaryFeatureModel::BinaryFeatureModel(uint64_t dim, uint32_t classes, uint64_t ones,
                                       double topic_boost, uint64_t seed)
    : dim_(dim), ones_(ones), inverse_weights_(static_cast<size_t>(classes) * dim) {
  Rng rng(seed);
  std::vector<uint32_t> order(dim);
  std::iota(order.begin(), order.end(), 0u);
  std::vector<double> background(dim);
  for (uint64_t i = dim; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  for (uint64_t rank = 0; rank < dim; ++rank) {
    background[order[rank]] = 1.0 / static_cast<double>(rank + 1);
  }
  const uint64_t topic_words = std::max<uint64_t>(1, dim / classes);
  for (uint32_t c = 0; c < classes; ++c) {
    std::vector<double> weight = background;
    // A partial shuffle picks the class's topic words.
    for (uint64_t i = 0; i < topic_words; ++i) {
      std::swap(order[i], order[i + rng.Below(dim - i)]);
      weight[order[i]] *= topic_boost;
    }
    for (uint64_t k = 0; k < dim; ++k) {
      inverse_weights_[c * dim + k] = static_cast<float>(1.0 / weight[k]);
    }
  }
}

void BinaryFeatureModel::FillRow(uint32_t cls, Rng& rng, std::span<float> row,
                                 Scratch& scratch) const {
  // Weighted sampling without replacement (Efraimidis–Spirakis): the `ones` words with the
  // smallest Exp(1) / weight keys are a draw of `ones` words in proportion to their weights.
  const float* inverse_weight = inverse_weights_.data() + cls * dim_;
  scratch.keys.resize(dim_);
  scratch.words.resize(dim_);
  for (uint64_t k = 0; k < dim_; ++k) {
    const double exponential = -std::log(1.0 - rng.Uniform());
    scratch.keys[k] = static_cast<float>(exponential) * inverse_weight[k];
    scratch.words[k] = static_cast<uint32_t>(k);
  }
  std::nth_element(scratch.words.begin(), scratch.words.begin() + (ones_ - 1), scratch.words.end(),
                   [&](uint32_t a, uint32_t b) {
                     return scratch.keys[a] < scratch.keys[b] ||
                            (scratch.keys[a] == scratch.keys[b] && a < b);
                   });
  std::fill(row.begin(), row.end(), 0.0f);
  for (uint64_t i = 0; i < ones_; ++i) row[scratch.words[i]] = 1.0f;
}

}  // namespace strata
