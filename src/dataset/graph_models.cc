#include "dataset/graph_models.h"

#include <algorithm>
#include <cmath>

namespace strata {

SbmModel::SbmModel(uint64_t nodes, uint32_t classes, double homophily, double degree_exponent,
                   uint64_t seed)
    : nodes_(nodes),
      classes_(classes),
      homophily_(homophily),
      one_minus_a_(1.0 - 1.0 / (degree_exponent - 1.0)),
      inverse_one_minus_a_(1.0 / one_minus_a_),
      permutation_(nodes, MixSeed(seed, 0x5B3)) {
  for (uint32_t c = 0; c < classes; ++c) {
    double class_size = static_cast<double>((nodes - c + classes - 1) / classes);
    class_span_.push_back(std::pow(class_size + 1.0, one_minus_a_) - 1.0);
  }
}

uint64_t SbmModel::SampleInClass(Rng& rng, uint32_t cls) const {
  uint64_t class_size = (nodes_ - cls + classes_ - 1) / classes_;
  // Inverse CDF of the continuous density x^-a on [1, class_size + 1).
  double x = std::pow(1.0 + rng.Uniform() * class_span_[cls], inverse_one_minus_a_);
  uint64_t rank = std::min<uint64_t>(static_cast<uint64_t>(x) - 1, class_size - 1);
  return permutation_.Forward(rank * classes_ + cls);
}

void SbmModel::SamplePair(Rng& rng, uint64_t& u, uint64_t& v) const {
  do {
    uint32_t cu = static_cast<uint32_t>(rng.Below(classes_));
    uint32_t cv = cu;
    if (classes_ > 1 && rng.Uniform() >= homophily_) {
      cv = static_cast<uint32_t>((cu + 1 + rng.Below(classes_ - 1)) % classes_);
    }
    u = SampleInClass(rng, cu);
    v = SampleInClass(rng, cv);
  } while (u == v);
}

uint32_t SbmModel::ClassOf(uint64_t node) const {
  return static_cast<uint32_t>(permutation_.Inverse(node) % classes_);
}

RmatModel::RmatModel(uint64_t nodes, uint32_t classes, uint64_t seed)
    : nodes_(nodes), classes_(classes), permutation_(nodes, MixSeed(seed, 0x7A7)) {
  scale_ = 0;
  while ((uint64_t{1} << scale_) < nodes) ++scale_;
}

void RmatModel::SamplePair(Rng& rng, uint64_t& u, uint64_t& v) const {
  // Quadrant thresholds in 16-bit fixed point: a, a + b, a + b + c.
  constexpr uint32_t kA = 37355, kAB = 49807, kABC = 62259;
  do {
    u = 0;
    v = 0;
    uint64_t bits = 0;
    for (int level = 0; level < scale_; ++level) {
      if (level % 4 == 0) bits = rng.Next();
      uint32_t r = static_cast<uint32_t>(bits & 0xFFFF);
      bits >>= 16;
      u <<= 1;
      v <<= 1;
      if (r >= kABC) {
        u |= 1;
        v |= 1;
      } else if (r >= kAB) {
        u |= 1;
      } else if (r >= kA) {
        v |= 1;
      }
    }
  } while (u >= nodes_ || v >= nodes_ || u == v);
  u = permutation_.Forward(u);
  v = permutation_.Forward(v);
}

uint32_t RmatModel::ClassOf(uint64_t node) const {
  unsigned __int128 position = permutation_.Inverse(node);
  return static_cast<uint32_t>(position * classes_ / nodes_);
}

}  // namespace strata
