#include "partition/partitioning.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace strata {

PartitionQuality MeasurePartitioning(const CscGraph& graph, const Partitioning& partitioning,
                                     std::span<const int32_t> labels,
                                     std::span<const uint64_t> train_ids, uint32_t num_classes) {
  const std::span<const uint32_t> part_of(partitioning.part_of.data(), partitioning.part_of.size());
  PartitionQuality quality;
  uint64_t cut = 0;
  ForEachEdge(graph, [&](uint64_t src, uint64_t dst) { cut += part_of[src] != part_of[dst]; });
  quality.edge_cut_ratio = graph.num_edges() ? static_cast<double>(cut) / graph.num_edges() : 0;

  std::vector<uint64_t> nodes(partitioning.parts, 0);
  for (uint32_t p : part_of) ++nodes[p];
  quality.max_part_nodes = *std::max_element(nodes.begin(), nodes.end());
  quality.min_part_nodes = *std::min_element(nodes.begin(), nodes.end());

  // Histograms of training labels: per partition, and over the whole training set.
  const uint64_t classes = std::max<uint32_t>(num_classes, 1);
  std::vector<uint64_t> per_part(partitioning.parts * classes, 0), total(classes, 0);
  std::vector<uint64_t> part_train(partitioning.parts, 0);
  uint64_t labelled = 0;
  for (uint64_t v : train_ids) {
    if (labels[v] < 0 || static_cast<uint64_t>(labels[v]) >= classes) continue;
    ++per_part[part_of[v] * classes + labels[v]];
    ++total[labels[v]];
    ++part_train[part_of[v]];
    ++labelled;
  }
  for (uint32_t p = 0; p < partitioning.parts; ++p) {
    if (part_train[p] == 0) continue;
    double distance = 0;
    for (uint64_t c = 0; c < classes; ++c) {
      distance += std::abs(static_cast<double>(per_part[p * classes + c]) / part_train[p] -
                           static_cast<double>(total[c]) / labelled);
    }
    quality.label_balance = std::max(quality.label_balance, distance / 2);
  }
  return quality;
}

ChargedArray<uint32_t> LabelGroups(std::span<const int32_t> labels,
                                   std::span<const uint64_t> train_ids, uint32_t num_classes,
                                   MemoryBudget& budget) {
  ChargedArray<uint32_t> groups(budget, labels.size(), "label groups");
  std::fill(groups.data(), groups.data() + groups.size(), num_classes);
  for (uint64_t v : train_ids) {
    if (labels[v] >= 0 && static_cast<uint32_t>(labels[v]) < num_classes) groups[v] = labels[v];
  }
  return groups;
}

}  // namespace strata
