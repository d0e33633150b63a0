// `strata partition`: rewrites a dataset so that each partition's nodes are contiguous ids —
// features, labels, topology and splits renumbered — and adds the partitioned layout
// (docs/format.md, minor version 1): partition offsets, the map back to the input's ids, and
// the hub section. Multistage training reads one partition's rows and adjacency as one
// sequential range of each file. Runs within the memory budget whatever the graph's size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "strata/dataset.h"

namespace strata {

enum class PartitionMethod { kGap, kRandom, kMetis };
PartitionMethod ParsePartitionMethod(std::string_view name);  // gap | random | metis
std::string_view PartitionMethodName(PartitionMethod method);

// What METIS balances beside the node count: nothing more, the training nodes, or each class's
// training nodes (DistDGL's balance constraints).
enum class MetisBalance { kNodes, kTrain, kClasses };
MetisBalance ParseMetisBalance(std::string_view name);  // nodes | train | classes

struct PartitionOptions {
  std::string input;
  std::string out;
  bool replace_existing = false;
  uint32_t parts = 0;
  PartitionMethod method = PartitionMethod::kGap;
  double hub_fraction = 0;      // share of the nodes kept as hubs
  uint32_t hub_walk_steps = 2;  // L of the reverse lazy random walk that scores hubs
  uint32_t passes = 2;          // GAP: streaming passes (the first assigns, later ones refine)
  uint32_t cluster_rounds = 0;  // GAP: label-propagation rounds that coarsen first; 0: none
  double imbalance = 1.05;      // GAP: each (partition, label) holds at most this × its share
  MetisBalance balance = MetisBalance::kNodes;  // METIS only
  uint64_t seed = 0;
  uint64_t memory_budget_bytes = 0;
  uint64_t row_pass_bytes = 0;  // features moved per pass over the input (0: the free budget)
  bool progress = false;        // on stderr: a bar on a terminal, else a line every 10 s
};

// Validates the options (input errors name the option or file), partitions, writes and
// publishes OUT; returns its meta (with `partition` set).
DatasetMeta PartitionDataset(const PartitionOptions& options);

}  // namespace strata
