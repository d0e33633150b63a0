#include "partition/gap_partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "common/progress.h"
#include "partition/size_constrained_clusters.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint32_t kUnassigned = std::numeric_limits<uint32_t>::max();

// The balance terms of one pass: per (group, partition) the node count, its score
// −α γ (count / μ)^(γ−1), and per group the partitions below capacity ordered by score.
class BalanceTable {
 public:
  BalanceTable(std::span<const uint64_t> group_sizes, uint64_t num_nodes, uint64_t num_edges,
               const GapOptions& o)
      : parts_(o.parts), gamma_(o.gamma), sets_(group_sizes.size()) {
    const double n = std::max<double>(num_nodes, 1);
    alpha_ = std::sqrt(static_cast<double>(parts_)) * (num_edges / 2.0) / std::pow(n, 1.5);
    for (size_t g = 0; g < group_sizes.size(); ++g) {
      inverse_share_.push_back(group_sizes[g] ? n / group_sizes[g] : 0);
      capacity_.push_back(static_cast<uint64_t>(
          std::ceil(o.imbalance * static_cast<double>(group_sizes[g]) / parts_)));
    }
    counts_.assign(group_sizes.size() * parts_, 0);
    for (uint32_t g = 0; g < group_sizes.size(); ++g) {
      for (uint32_t p = 0; p < parts_; ++p) sets_[g].emplace(Score(g, p), p);
    }
  }

  double Score(uint32_t g, uint32_t p) const {
    const double x = counts_[Index(g, p)] * inverse_share_[g];
    return -alpha_ * gamma_ * std::pow(x, gamma_ - 1);
  }
  bool Full(uint32_t g, uint32_t p) const { return counts_[Index(g, p)] >= capacity_[g]; }
  // The partition with the best balance term among those below capacity.
  std::pair<double, uint32_t> Best(uint32_t g) const {
    if (sets_[g].empty()) throw Error::Internal("GAP: every partition is full for a group");
    return *sets_[g].rbegin();
  }
  void Add(uint32_t g, uint32_t p, int delta) {
    if (!Full(g, p)) sets_[g].erase({Score(g, p), p});
    counts_[Index(g, p)] += delta;
    if (!Full(g, p)) sets_[g].emplace(Score(g, p), p);
  }

 private:
  size_t Index(uint32_t g, uint32_t p) const { return size_t{g} * parts_ + p; }

  uint32_t parts_;
  double gamma_;
  double alpha_ = 0;
  std::vector<double> inverse_share_;  // 1 / μ_g
  std::vector<uint64_t> capacity_;
  std::vector<uint64_t> counts_;
  // Ordered sets rather than heaps: a score changes by one removal and one insertion.
  std::vector<std::set<std::pair<double, uint32_t>>> sets_;
};

// Places each cluster whole, largest first onto the partition with the fewest nodes, so that
// the passes start from partitions that keep the clusters and hold even node counts.
void PlaceClusters(std::span<const uint32_t> cluster_of, uint32_t parts, uint32_t* part_of,
                   MemoryBudget& budget) {
  const uint64_t n = cluster_of.size();
  ChargedArray<uint32_t> size_or_part(budget, n, "cluster sizes");
  std::fill(size_or_part.data(), size_or_part.data() + n, 0);
  for (uint32_t c : cluster_of) ++size_or_part[c];
  const uint64_t count = n - static_cast<uint64_t>(std::count(
                                 size_or_part.data(), size_or_part.data() + n, uint32_t{0}));
  ChargedArray<uint32_t> clusters(budget, count, "clusters by size");
  uint32_t* end = clusters.data();
  for (uint32_t c = 0; c < n; ++c) {
    if (size_or_part[c] > 0) *end++ = c;
  }
  std::stable_sort(clusters.data(), end,
                   [&](uint32_t a, uint32_t b) { return size_or_part[a] > size_or_part[b]; });
  std::set<std::pair<uint64_t, uint32_t>> lightest;  // (nodes, partition)
  for (uint32_t p = 0; p < parts; ++p) lightest.emplace(0, p);
  for (const uint32_t c : std::span<const uint32_t>(clusters.data(), count)) {
    auto [nodes, p] = *lightest.begin();
    lightest.erase(lightest.begin());
    lightest.emplace(nodes + size_or_part[c], p);
    size_or_part[c] = p;
  }
  for (uint64_t v = 0; v < n; ++v) part_of[v] = size_or_part[cluster_of[v]];
}

}  // namespace

Partitioning GapPartition(const CscGraph& graph, std::span<const uint32_t> groups,
                          uint32_t num_groups, const GapOptions& o, MemoryBudget& budget,
                          ProgressBar* progress) {
  const uint64_t n = graph.num_nodes();
  if (o.parts == 0 || o.parts > n) {
    throw Error::Input("--parts must be between 1 and the number of nodes");
  }
  if (o.passes == 0) throw Error::Input("--passes must be at least 1");
  if (!(o.imbalance >= 1)) throw Error::Input("--imbalance must be at least 1");
  Partitioning result;
  result.parts = o.parts;
  result.part_of = ChargedArray<uint32_t>(budget, n, "partition assignment");
  uint32_t* part_of = result.part_of.data();
  std::fill(part_of, part_of + n, kUnassigned);

  std::vector<uint64_t> group_sizes(num_groups, 0);
  for (uint32_t g : groups) ++group_sizes[g];
  BalanceTable balance(group_sizes, n, graph.num_edges(), o);
  if (o.cluster_rounds > 0) {
    const ChargedArray<uint32_t> clusters = SizeConstrainedClusters(
        graph, (n + o.parts - 1) / o.parts, o.cluster_rounds, budget, progress);
    PlaceClusters({clusters.data(), n}, o.parts, part_of, budget);
    for (uint64_t v = 0; v < n; ++v) balance.Add(groups[v], part_of[v], +1);
  }

  std::vector<uint32_t> neighbours_in(o.parts, 0);  // NumNbr of Algorithm 2
  std::vector<uint32_t> touched;                    // AdjQ: partitions with a count
  for (uint32_t pass = 0; pass < o.passes; ++pass) {
    if (progress) progress->Restart(fmt::format("partitioning, pass {}/{}", pass + 1, o.passes), n);
    auto place = [&](uint64_t node) {
      const uint32_t g = groups[node];
      if (part_of[node] != kUnassigned) balance.Add(g, part_of[node], -1);
      auto [best, best_part] = balance.Best(g);
      for (uint32_t p : touched) {
        if (balance.Full(g, p)) continue;
        const double score = neighbours_in[p] + balance.Score(g, p);
        if (score >= best) std::tie(best, best_part) = std::pair{score, p};
      }
      part_of[node] = best_part;
      balance.Add(g, best_part, +1);
      for (uint32_t p : touched) neighbours_in[p] = 0;
      touched.clear();
    };
    ForEachInNeighbourList(
        graph,
        [&](uint64_t source, uint64_t node) {
          const uint32_t p = part_of[source];
          if (p == kUnassigned || source == node) return;
          if (neighbours_in[p]++ == 0) touched.push_back(p);
        },
        place, progress);
  }
  return result;
}

}  // namespace strata
