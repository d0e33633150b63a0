// Steps shared by the importers (--npy, --edge-list, --ogb): option checks, the node id
// width, progress, and streaming an [2, E] edge_index array into the CSC builder.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "common/progress.h"
#include "dataset/csc_builder.h"
#include "strata/import.h"
#include "strata/memory_budget.h"
#include "strata/npy.h"

namespace strata {

// Room kept beside the CSC builder's buffer for chunk buffers and file buffers.
inline constexpr uint64_t kBuilderReserveBytes = uint64_t{48} << 20;

void CheckImportOptions(const ImportOptions& o);
// The dataset's node id width: 4 bytes below 2^32 nodes, unless --node-id-bytes says 8.
uint32_t ImportNodeIdBytes(const ImportOptions& o, uint64_t num_nodes);
// A progress bar when the options ask for one, else null.
std::unique_ptr<ProgressBar> MakeImportProgress(const ImportOptions& o);

// Adds the edges, and with `undirected` their reverses.
void AddImportedEdges(CscBuilder& builder, std::span<const uint64_t> src,
                      std::span<const uint64_t> dst, bool undirected);

// Streams edge_index [2, E] (any integer dtype) into the builder, checking every id against
// num_nodes; errors name the element.
void ReadEdgeIndex(const NpyReader& edges, uint64_t num_nodes, bool undirected,
                   MemoryBudget& budget, CscBuilder& builder, ProgressBar* progress);

}  // namespace strata
