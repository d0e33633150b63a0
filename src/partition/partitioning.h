// Partitioning is a node → partition assignment, the output of every partitioner and the input
// of hub selection and the partitioned-layout writer; MeasurePartitioning says how good one is.
//
// Invariant: part_of has one entry per node, each below `parts`.
#pragma once

#include <cstdint>
#include <span>

#include "common/interrupt.h"
#include "common/progress.h"
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

// Calls on_edge(source, destination) for every stored edge in edge order (destinations
// ascending) and on_node(v) for every node v in id order, after v's in-edges; streamed from
// disk when the topology is there. Checks for Ctrl-C between chunks; `progress`, when given,
// counts the nodes done.
template <typename OnEdge, typename OnNode>
void ForEachInNeighbourList(const CscGraph& graph, OnEdge&& on_edge, OnNode&& on_node,
                            ProgressBar* progress = nullptr) {
  uint64_t dst = 0;
  graph.ForEachSourceChunk([&](uint64_t first_edge, std::span<const uint64_t> sources) {
    for (size_t i = 0; i < sources.size(); ++i) {
      while (first_edge + i >= graph.EdgeBegin(dst + 1)) on_node(dst++);
      on_edge(sources[i], dst);
    }
    if (progress) progress->Update(dst);
    ThrowIfInterrupted();
  });
  while (dst < graph.num_nodes()) on_node(dst++);
}

// Calls fn(source, destination) for every stored edge, as above.
template <typename Fn>
void ForEachEdge(const CscGraph& graph, Fn&& fn) {
  ForEachInNeighbourList(graph, fn, [](uint64_t) {});
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
