// Pieces shared by the importers and the generator: how much of the budget the CSC builder
// may take, writing ids in the dataset's width, and filling in the graph part of meta.json.
#pragma once

#include <cstdint>

#include "dataset/csc_builder.h"
#include "dataset/dataset_writer.h"
#include "storage/file.h"
#include "strata/memory_budget.h"

namespace strata {

// Values an importer reads from an input array at a time: its buffers stay a few MiB whatever
// the array's size.
inline constexpr uint64_t kImportChunkElements = uint64_t{1} << 20;

// The budget's share for the CSC builder's run buffer: what is left once `reserve_bytes` are
// kept for buffers that live beside it.
uint64_t CscBufferBytes(const MemoryBudget& budget, uint64_t reserve_bytes);

inline void AppendNodeId(FileWriter& file, uint64_t id, uint32_t node_id_bytes) {
  if (node_id_bytes == 4) {
    file.AppendValue(static_cast<uint32_t>(id));
  } else {
    file.AppendValue(id);
  }
}

// Finishes the builder into graph/indptr.bin and graph/indices.bin of `writer` and records
// the graph's fields in its meta (num_nodes, num_edges, node_id_bytes, in-degree stats).
void WriteGraph(CscBuilder& builder, uint64_t num_nodes, uint32_t node_id_bytes,
                bool add_self_loops, DatasetWriter& writer, ProgressBar* progress);

}  // namespace strata
