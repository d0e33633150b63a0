// HsbmModel is a hierarchical degree-corrected block model, the generator's model of the
// locality real graphs have at every scale. Node positions [0, n) are cut into 2^H leaf
// communities of about 100 nodes (the size of the tightest communities in real networks,
// Leskovec et al., 2009), contiguous ranges nested in a binary hierarchy: the block at depth d
// holds the leaves whose index shares its top d bits. A pair draws its first end by weight, then
// a depth d from a profile, and its second end by weight inside the first's block at depth d
// (d = H: its leaf). Within a leaf, rank r has weight (r + 1)^-a with a = 1 / (exponent - 1),
// power-law degrees as in SbmModel. Classes are runs of the blocks at a class depth c, as long
// as the classes' shares ask (HsbmClassLayout). Node ids are the positions scattered by a
// permutation, so that no id order gives the locality for free.
//
// The profile is set from the edge cuts the planted hierarchy makes at 2, 4, 8, ... parts and an
// edge homophily (HsbmDepthShares); a partitioner that finds the hierarchy cuts that share.
// With label noise q, the lightest q of each leaf are its periphery: labelled at random while
// their edges and features follow their block, and drawn as an edge end at kPeripheryWeight of
// their weight; as in a real graph, whose errors sit on its sparsely linked nodes, whose
// category neither their few links nor their content reveal.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/random.h"
#include "dataset/node_permutation.h"

namespace strata {

// Where the classes lie: class k holds the blocks [first[k], first[k + 1]) of `depth`, a run whose
// length follows the class's share of the nodes, (k + 1)^-skew (equal shares for skew 0), at the
// shallowest depth that gives every class a block. Real graphs' classes are uneven, and a
// large class keeps in it pairs that cross the partitions' blocks.
struct HsbmClassLayout {
  int depth = 0;
  std::vector<uint64_t> first;  // classes + 1 entries, from 0 to 2^depth
};
HsbmClassLayout LayOutHsbmClasses(uint32_t classes, double skew);

// For each depth 0..levels (at least layout.depth), the probability that a pair whose ends lie
// in one block of that depth, each in a leaf drawn uniformly inside it, joins one class.
std::vector<double> HsbmSameClass(const HsbmClassLayout& layout, int levels);

// The share of pairs drawn at each depth 0..levels (levels: the leaves) such that the planted
// blocks at depth j cut cuts[j - 1] of the pairs (j = 1 .. cuts.size(), at most levels), the
// depths between those and the class depth take what brings the edge homophily (same_class[d]
// of the pairs drawn at depth d are in one class) nearest to `homophily`, and the rest is spread
// evenly over the depths from the class depth down to the leaves. Each share is at least 0;
// cuts that ask for a negative one are met as nearly as they can be.
std::vector<double> HsbmDepthShares(int levels, int class_depth, std::span<const double> same_class,
                                    std::span<const double> cuts, double homophily);

class HsbmModel {
 public:
  static constexpr int kCommunityLevels = 4;
  static constexpr double kPeripheryWeight = 0.2;

  // `homophily` is the labels' aim: the profile aims higher by what the mislabelled nodes'
  // share of the edge ends takes away.
  HsbmModel(uint64_t nodes, uint32_t classes, double class_skew, std::span<const double> cuts,
            double homophily, double degree_exponent, double label_noise, uint64_t seed);

  // Draws one pair (never a self loop).
  void SamplePair(Rng& rng, uint64_t& u, uint64_t& v) const;
  // The class of node's block, what its edges and features follow.
  uint32_t ClassOf(uint64_t node) const;
  // Whether node is in its leaf's periphery, the lightest label_noise share of it.
  bool InPeriphery(uint64_t node) const;
  // The block at `depth` (0 .. levels()) holding `node`.
  uint64_t BlockOf(uint64_t node, int depth) const;
  // The communities features are drawn from beside the class: the blocks of the kCommunityLevels
  // depths below the class depth (fewer where the leaves are nearer), coarsest first.
  // CommunityCounts()[k] blocks at level k; CommunityOf(node, k) is node's.
  std::vector<uint64_t> CommunityCounts() const;
  uint64_t CommunityOf(uint64_t node, size_t level) const {
    return BlockOf(node, classes_.depth + 1 + static_cast<int>(level));
  }
  int levels() const { return levels_; }
  int class_depth() const { return classes_.depth; }
  // Per depth, the share of the pairs drawn there that join one class (HsbmSameClass).
  const std::vector<double>& same_class() const { return same_class_; }
  const std::vector<double>& depth_shares() const { return shares_; }

 private:
  uint64_t LeafOfPosition(uint64_t position) const;
  // The first position of `leaf` and its size.
  uint64_t LeafFirst(uint64_t leaf) const;
  uint64_t LeafSize(uint64_t leaf) const { return LeafFirst(leaf + 1) - LeafFirst(leaf); }
  // The first rank of the periphery of a leaf of `size` nodes.
  uint64_t PeripheryRank(uint64_t size) const {
    return size == smallest_leaf_ ? small_periphery_ : large_periphery_;
  }
  // A node of `leaf` drawn by weight.
  uint64_t SampleInLeaf(Rng& rng, uint64_t leaf) const;

  uint64_t nodes_;
  HsbmClassLayout classes_;
  int levels_;  // H: 2^H leaves
  std::vector<double> same_class_;
  std::vector<double> shares_;
  std::vector<double> share_cdf_;
  double one_minus_a_;
  double inverse_one_minus_a_;
  uint64_t smallest_leaf_ = 0;  // leaves hold this many nodes or one more
  // (size + 1)^(1 - a) - 1 for the two leaf sizes, as SampleInLeaf's inverse CDF takes it.
  double small_span_ = 0;
  double large_span_ = 0;
  // PeripheryRank of the two leaf sizes.
  uint64_t small_periphery_ = 0;
  uint64_t large_periphery_ = 0;
  NodePermutation permutation_;
};

}  // namespace strata
