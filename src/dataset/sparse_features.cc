#include "dataset/sparse_features.h"

#include <algorithm>
#include <numeric>

#include "strata/error.h"

namespace strata {

SparseFeatureModel::SparseFeatureModel(uint64_t dim, uint32_t classes, uint64_t ones,
                                       double topic_share, uint64_t seed)
    : dim_(dim),
      ones_(ones),
      topic_share_(topic_share),
      topic_size_(std::max<uint64_t>(dim / std::max<uint32_t>(classes, 1), 1)) {
  if (ones == 0 || 8 * ones > dim || classes == 0 || !(topic_share >= 0 && topic_share <= 1)) {
    throw Error::Internal("SparseFeatureModel: bad parameters");
  }
  Rng rng(seed);
  word_of_rank_.resize(dim);
  std::iota(word_of_rank_.begin(), word_of_rank_.end(), 0u);
  for (uint64_t i = dim; i > 1; --i) std::swap(word_of_rank_[i - 1], word_of_rank_[rng.Below(i)]);
  background_cdf_.resize(dim);
  double total = 0;
  for (uint64_t r = 0; r < dim; ++r) background_cdf_[r] = total += 1.0 / static_cast<double>(r + 1);
  for (double& c : background_cdf_) c /= total;
  std::vector<uint32_t> words(dim);
  std::iota(words.begin(), words.end(), 0u);
  for (uint64_t i = dim; i > 1; --i) std::swap(words[i - 1], words[rng.Below(i)]);
  topic_words_.resize(static_cast<size_t>(classes) * topic_size_);
  for (size_t i = 0; i < topic_words_.size(); ++i) topic_words_[i] = words[i % dim];
}

uint32_t SparseFeatureModel::DrawWord(uint32_t cls, Rng& rng) const {
  if (rng.Uniform() < topic_share_) return topic_words_[cls * topic_size_ + rng.Below(topic_size_)];
  const double u = rng.Uniform();
  const auto rank =
      std::upper_bound(background_cdf_.begin(), background_cdf_.end(), u) - background_cdf_.begin();
  return word_of_rank_[std::min<uint64_t>(rank, dim_ - 1)];
}

void SparseFeatureModel::DrawRow(uint32_t cls, Rng& rng, std::vector<uint32_t>& columns) const {
  columns.clear();
  // Draw what is missing, then drop repeats; a few rounds at most while ones << dim.
  while (columns.size() < ones_) {
    for (uint64_t i = columns.size(); i < ones_; ++i) columns.push_back(DrawWord(cls, rng));
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  }
}

}  // namespace strata
