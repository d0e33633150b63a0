// Partitioning is a node → partition assignment, the output of every partitioner and the input
// of hub selection and the partitioned-layout writer; MeasurePartitioning says how good one is.
//
// Invariant: part_of has one entry per node, each below `parts`.
#pragma once

#include <cstdint>
#include <span>

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
