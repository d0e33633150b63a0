#include "partition/random_partitioner.h"

#include "dataset/node_permutation.h"
#include "strata/error.h"

namespace strata {

Partitioning RandomPartition(uint64_t num_nodes, uint32_t parts, uint64_t seed,
                             MemoryBudget& budget) {
  if (parts == 0 || parts > num_nodes) {
    throw Error::Input("--parts must be between 1 and the number of nodes");
  }
  Partitioning result;
  result.parts = parts;
  result.part_of = ChargedArray<uint32_t>(budget, num_nodes, "partition assignment");
  const NodePermutation permutation(num_nodes, seed);
  for (uint64_t v = 0; v < num_nodes; ++v) {
    // Position i of the permutation goes to partition ⌊i·k/n⌋: sizes differ by at most one.
    const unsigned __int128 position = permutation.Forward(v);
    result.part_of[v] = static_cast<uint32_t>(position * parts / num_nodes);
  }
  return result;
}

}  // namespace strata
