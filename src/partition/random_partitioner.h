// The random partitioner of MariusGNN, kept as the ablation baseline of GAP: nodes are dealt
// into `parts` partitions of equal size (±1) by a seeded pseudo-random permutation, blind to
// the graph, so partitions keep the label distribution but lose most neighbourhoods.
#pragma once

#include <cstdint>

#include "partition/partitioning.h"

namespace strata {

Partitioning RandomPartition(uint64_t num_nodes, uint32_t parts, uint64_t seed,
                             MemoryBudget& budget);

}  // namespace strata
