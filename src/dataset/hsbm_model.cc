#include "dataset/hsbm_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace strata {

HsbmClassLayout LayOutHsbmClasses(uint32_t classes, double skew) {
  // Class k starts at block ceil(2^depth cumulative_k). With equal shares cumulative_k = k /
  // classes is exact wherever k 2^depth / classes is a whole number, so the runs are as even as
  // blocks allow.
  std::vector<double> cumulative(classes + 1, 0.0);
  for (uint32_t k = 0; k < classes; ++k) {
    cumulative[k + 1] = cumulative[k] + std::pow(static_cast<double>(k) + 1, -skew);
  }
  const double total = cumulative[classes];
  for (double& c : cumulative) c /= total;
  HsbmClassLayout layout;
  layout.first.resize(classes + 1);
  // It stops at depth 62, more blocks than any graph has nodes, which the generator refuses.
  for (layout.depth = static_cast<int>(std::bit_width(classes - 1));; ++layout.depth) {
    for (uint32_t k = 0; k < classes; ++k) {
      layout.first[k] = static_cast<uint64_t>(std::ceil(std::ldexp(cumulative[k], layout.depth)));
    }
    layout.first[classes] = uint64_t{1} << layout.depth;
    if (layout.depth == 62 ||
        std::adjacent_find(layout.first.begin(), layout.first.end(),
                           std::greater_equal<uint64_t>()) == layout.first.end()) {
      return layout;
    }
  }
}

std::vector<double> HsbmSameClass(const HsbmClassLayout& layout, int levels) {
  std::vector<double> same(levels + 1, 1.0);
  for (int d = 0; d < layout.depth; ++d) {
    // A block of depth d holds `width` class blocks; a pair in it is in one class with
    // probability sum over classes of (the class's blocks in it / width)^2.
    const uint64_t width = uint64_t{1} << (layout.depth - d);
    double sum = 0;
    for (size_t k = 0; k + 1 < layout.first.size(); ++k) {
      const uint64_t begin = layout.first[k], end = layout.first[k + 1];
      for (uint64_t block = begin / width; block * width < end; ++block) {
        const uint64_t held = std::min(end, (block + 1) * width) - std::max(begin, block * width);
        const double share = static_cast<double>(held) / static_cast<double>(width);
        sum += share * share;
      }
    }
    same[d] = std::ldexp(sum, -d);
  }
  return same;
}

std::vector<double> HsbmDepthShares(int levels, int class_depth, std::span<const double> same_class,
                                    std::span<const double> cuts, double homophily) {
  std::vector<double> shares(levels + 1, 0.0);
  // A pair drawn at depth d < j lands in another block of depth j unless the 2^(j - d) blocks
  // of depth j in its block at depth d offer it its own: it is cut with probability
  // 1 - 2^(d - j). So cut_j = sum over d < j of shares[d] (1 - 2^(d - j)), solved for
  // shares[j - 1] from j = 1 up.
  const int given = std::min<int>(static_cast<int>(cuts.size()), levels);
  double assigned = 0;
  for (int j = 1; j <= given; ++j) {
    double cut_above = 0;
    for (int d = 0; d + 1 < j; ++d) cut_above += shares[d] * (1 - std::ldexp(1.0, d - j));
    shares[j - 1] = std::clamp(2 * (cuts[j - 1] - cut_above), 0.0, 1 - assigned);
    assigned += shares[j - 1];
  }
  const double rest = 1 - assigned;
  // Below the class depth c a pair always stays in its class. The depths between the given
  // ones and c share x, the deeper ones rest - x:
  // homophily = rest - x + same_above + x * mean same_class, solved for x.
  const int middle_end = std::max(given, std::min(class_depth, levels));
  double same_above = 0;
  for (int d = 0; d < given; ++d) same_above += shares[d] * same_class[d];
  double middle = 0;
  if (middle_end > given) {
    double mean_same = 0;
    for (int d = given; d < middle_end; ++d) mean_same += same_class[d];
    mean_same /= middle_end - given;
    middle = std::clamp((rest + same_above - homophily) / (1 - mean_same), 0.0, rest);
    for (int d = given; d < middle_end; ++d) shares[d] = middle / (middle_end - given);
  }
  // The rest, evenly over the depths from the class depth down to the leaves.
  for (int d = middle_end; d <= levels; ++d)
    shares[d] = (rest - middle) / (levels - middle_end + 1);
  return shares;
}

HsbmModel::HsbmModel(uint64_t nodes, uint32_t classes, double class_skew,
                     std::span<const double> cuts, double homophily, double degree_exponent,
                     double label_noise, uint64_t seed)
    : nodes_(nodes),
      classes_(LayOutHsbmClasses(classes, class_skew)),
      one_minus_a_(1.0 - 1.0 / (degree_exponent - 1.0)),
      inverse_one_minus_a_(1.0 / one_minus_a_),
      permutation_(nodes, MixSeed(seed, 0x45B)) {
  // Leaves of about 100 nodes, at least one a class block, at least one node a leaf.
  const int by_size =
      static_cast<int>(std::lround(std::log2(std::max(1.0, static_cast<double>(nodes) / 100))));
  const int most = 63 - __builtin_clzll(nodes);  // floor(log2 nodes)
  levels_ = std::min(std::max(by_size, classes_.depth), most);
  smallest_leaf_ = nodes >> levels_;
  auto span = [&](double size) { return std::pow(size + 1.0, one_minus_a_) - 1.0; };
  small_span_ = span(static_cast<double>(smallest_leaf_));
  large_span_ = span(static_cast<double>(smallest_leaf_ + 1));
  // The periphery: the last label_noise of the ranks, rounded to the nearest.
  auto periphery = [&](uint64_t size) {
    return static_cast<uint64_t>(std::ceil((1 - label_noise) * static_cast<double>(size) - 0.5));
  };
  small_periphery_ = periphery(smallest_leaf_);
  large_periphery_ = periphery(smallest_leaf_ + 1);
  // An edge with a mislabelled end joins two labels by chance (1 / classes); the periphery
  // holds a share `ends` of the edge ends: its ranks' share of a leaf's weight, lowered.
  const double light = 1 - span(static_cast<double>(small_periphery_)) / small_span_;
  const double ends = kPeripheryWeight * light / (1 - light + kPeripheryWeight * light);
  const double both_kept = (1 - ends) * (1 - ends);
  const double aim = std::clamp((homophily - (1 - both_kept) / classes) / both_kept, 0.0, 1.0);
  same_class_ = HsbmSameClass(classes_, levels_);
  shares_ = HsbmDepthShares(levels_, classes_.depth, same_class_, cuts, aim);
  share_cdf_.resize(shares_.size());
  std::partial_sum(shares_.begin(), shares_.end(), share_cdf_.begin());
  share_cdf_.back() = 1.0;
}

uint64_t HsbmModel::LeafFirst(uint64_t leaf) const {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(leaf) * nodes_ >> levels_);
}

uint64_t HsbmModel::LeafOfPosition(uint64_t position) const {
  // Leaf l holds positions [l n / L, (l + 1) n / L).
  const unsigned __int128 leaves = uint64_t{1} << levels_;
  return static_cast<uint64_t>(((position + 1) * leaves - 1) / nodes_);
}

uint64_t HsbmModel::SampleInLeaf(Rng& rng, uint64_t leaf) const {
  const uint64_t first = LeafFirst(leaf);
  const uint64_t size = LeafSize(leaf);
  // Inverse CDF of the continuous density x^-a on [1, size + 1).
  const double span = size == smallest_leaf_ ? small_span_ : large_span_;
  uint64_t rank;
  do {
    const double x = std::pow(1.0 + rng.Uniform() * span, inverse_one_minus_a_);
    rank = std::min<uint64_t>(static_cast<uint64_t>(x) - 1, size - 1);
  } while (rank >= PeripheryRank(size) && rng.Uniform() >= kPeripheryWeight);
  return first + rank;
}

void HsbmModel::SamplePair(Rng& rng, uint64_t& u, uint64_t& v) const {
  do {
    const uint64_t leaf = rng.Below(uint64_t{1} << levels_);
    u = SampleInLeaf(rng, leaf);
    const double r = rng.Uniform();
    const int depth = static_cast<int>(
        std::upper_bound(share_cdf_.begin(), share_cdf_.end() - 1, r) - share_cdf_.begin());
    const int below = levels_ - depth;
    v = SampleInLeaf(rng, (leaf >> below << below) + rng.Below(uint64_t{1} << below));
  } while (u == v);
  u = permutation_.Forward(u);
  v = permutation_.Forward(v);
}

uint64_t HsbmModel::BlockOf(uint64_t node, int depth) const {
  return LeafOfPosition(permutation_.Inverse(node)) >> (levels_ - depth);
}

std::vector<uint64_t> HsbmModel::CommunityCounts() const {
  std::vector<uint64_t> counts;
  for (int d = classes_.depth + 1; d <= std::min(levels_, classes_.depth + kCommunityLevels); ++d) {
    counts.push_back(uint64_t{1} << d);
  }
  return counts;
}

bool HsbmModel::InPeriphery(uint64_t node) const {
  const uint64_t position = permutation_.Inverse(node);
  const uint64_t leaf = LeafOfPosition(position);
  return position - LeafFirst(leaf) >= PeripheryRank(LeafSize(leaf));
}

uint32_t HsbmModel::ClassOf(uint64_t node) const {
  const uint64_t block = BlockOf(node, classes_.depth);
  return static_cast<uint32_t>(
      std::upper_bound(classes_.first.begin(), classes_.first.end(), block) -
      classes_.first.begin() - 1);
}

}  // namespace strata
