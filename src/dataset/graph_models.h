// Random graph models behind `strata generate`. Each draws undirected node pairs one at a
// time from an Rng, in O(1) memory whatever the number of nodes, and knows the planted class
// of every node, so the generator can stream edges into the CSC builder and labels and
// features into their files without storing the graph.
#pragma once

#include <cstdint>
#include <vector>

#include "common/random.h"
#include "dataset/node_permutation.h"

namespace strata {

// Degree-corrected stochastic block model. Node positions p in [0, n) belong to class
// p % classes; within a class, position rank r = p / classes has weight (r + 1)^-a with
// a = 1 / (degree_exponent - 1), which gives power-law degrees with that exponent. A pair
// picks a class uniformly, then the other end's class is the same with probability
// `homophily` and another uniformly chosen class otherwise; each end is drawn by weight.
class SbmModel {
 public:
  SbmModel(uint64_t nodes, uint32_t classes, double homophily, double degree_exponent,
           uint64_t seed);

  // Draws one pair (never a self loop).
  void SamplePair(Rng& rng, uint64_t& u, uint64_t& v) const;
  uint32_t ClassOf(uint64_t node) const;

 private:
  uint64_t SampleInClass(Rng& rng, uint32_t cls) const;

  uint64_t nodes_;
  uint32_t classes_;
  double homophily_;
  double one_minus_a_;
  double inverse_one_minus_a_;
  std::vector<double> class_span_;  // (class_size + 1)^(1 - a) - 1, per class
  NodePermutation permutation_;
};

// R-MAT with the Graph500 parameters (a, b, c, d) = (0.57, 0.19, 0.19, 0.05) on the smallest
// power of two covering n, drawing again when an end falls outside [0, n). Classes are
// planted as contiguous ranges of the R-MAT id space, which the recursive quadrant structure
// makes more connected inside than between; node ids are then scattered by a permutation.
class RmatModel {
 public:
  RmatModel(uint64_t nodes, uint32_t classes, uint64_t seed);

  void SamplePair(Rng& rng, uint64_t& u, uint64_t& v) const;
  uint32_t ClassOf(uint64_t node) const;

 private:
  uint64_t nodes_;
  uint32_t classes_;
  int scale_;
  NodePermutation permutation_;
};

}  // namespace strata
