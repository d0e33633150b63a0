// Writes the partitioned copy of a dataset (docs/format.md, "Partitioned layout"): node ids
// renumbered so that partition p holds the contiguous ids [offsets[p], offsets[p+1]) — in the
// input's id order inside a partition — with features, labels, topology and splits rewritten
// in that order, plus partition/: the offsets, the input id of every node, and the hub
// section (hub ids, their feature rows and their in-neighbour lists) that training keeps in
// memory for the whole run.
//
// Bounded memory: two id maps (8 bytes per node each); feature rows moved by sequential passes
// over the input, each filling the rest of the budget with the next range of new ids (so the
// passes number features.bin's size over the free budget, one when it fits), or by a random
// read per row where that is cheaper; and the topology rebuilt by the external-memory CSC
// builder.
#pragma once

#include <cstdint>
#include <span>

#include "dataset/dataset_writer.h"
#include "partition/partitioning.h"
#include "strata/dataset.h"

namespace strata {

class ProgressBar;

// `hubs` are input ids. Fills every file and field of `writer`'s meta except `partition`.
// `row_pass_bytes` caps the feature bytes one pass moves (0: as many as the budget holds).
void WritePartitionedLayout(const Dataset& input, const CscGraph& graph,
                            const Partitioning& partitioning, std::span<const uint64_t> hubs,
                            uint64_t row_pass_bytes, DatasetWriter& writer, MemoryBudget& budget,
                            ProgressBar* progress);

}  // namespace strata
