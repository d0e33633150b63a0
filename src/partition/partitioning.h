// Partitioning is a node → partition assignment, the output of every partitioner and the input
// of hub selection and the partitioned-layout writer; MeasurePartitioning says how good one is.
//
// Invariant: part_of has one entry per node, each below `parts`.
#pragma once

#include <cstdint>
#include <span>

#include "common/interrupt.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

struct Partitioning {
  uint32_t parts = 0;
  ChargedArray<uint32_t> part_of;
};

struct PartitionQuality {
  double edge_cut_ratio = 0;  // stored edges whose source and destination differ in partition
  // Max over partitions of the total-variation distance between the partition's training
  // label histogram and the training set's (partitions without training nodes excluded).
  double label_balance = 0;
  uint64_t max_part_nodes = 0;
  uint64_t min_part_nodes = 0;
};

// Calls fn(source, destination) for every stored edge in edge order (destinations ascending),
// streamed from disk when the topology is there; checks for Ctrl-C between chunks.
template <typename Fn>
void ForEachEdge(const CscGraph& graph, Fn&& fn) {
  uint64_t dst = 0;
  graph.ForEachSourceChunk([&](uint64_t first_edge, std::span<const uint64_t> sources) {
    for (size_t i = 0; i < sources.size(); ++i) {
      while (first_edge + i >= graph.EdgeBegin(dst + 1)) ++dst;
      fn(sources[i], dst);
    }
    ThrowIfInterrupted();
  });
}

// `labels` has one entry per node (-1: unlabelled); `train_ids` are the training nodes.
PartitionQuality MeasurePartitioning(const CscGraph& graph, const Partitioning& partitioning,
                                     std::span<const int32_t> labels,
                                     std::span<const uint64_t> train_ids, uint32_t num_classes);

// Label groups as GAP balances them: a training node's label, or `num_classes` for every other
// node (unlabelled, or labelled but not training), so that non-training nodes are spread too.
ChargedArray<uint32_t> LabelGroups(std::span<const int32_t> labels,
                                   std::span<const uint64_t> train_ids, uint32_t num_classes,
                                   MemoryBudget& budget);

}  // namespace strata
