#include "dataset/build_common.h"

#include <fmt/format.h>

#include <algorithm>

#include "storage/file.h"

namespace strata {

uint64_t CscBufferBytes(const MemoryBudget& budget, uint64_t reserve_bytes) {
  uint64_t available = budget.available();
  uint64_t floor = uint64_t{1} << 20;
  return available > reserve_bytes + floor ? available - reserve_bytes : floor;
}

void WriteGraph(CscBuilder& builder, uint64_t num_nodes, uint32_t node_id_bytes,
                bool add_self_loops, DatasetWriter& writer, ProgressBar* progress) {
  // indptr holds every node, whatever the edges: 4 billion nodes ask for 34 GB. (The edges'
  // count is known only once repeats are dropped, as they are written.)
  CheckFreeSpace(ParentDirectory(writer.PathOf(kLabelsFile)), sizeof(uint64_t) * (num_nodes + 1),
                 fmt::format("graph/indptr.bin of {} nodes", num_nodes));
  CscBuildResult graph =
      builder.Finish(num_nodes, node_id_bytes, add_self_loops, writer.PathOf(kIndptrFile),
                     writer.PathOf(kIndicesFile), progress);
  writer.Record(kIndptrFile, graph.indptr);
  writer.Record(kIndicesFile, graph.indices);
  DatasetMeta& meta = writer.meta();
  meta.num_nodes = num_nodes;
  meta.num_edges = graph.num_edges;
  meta.node_id_bytes = node_id_bytes;
  meta.in_degree = graph.in_degree;
}

}  // namespace strata
