#include "dataset/import_common.h"

#include <fmt/format.h>

#include "common/interrupt.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kEdgeChunk = uint64_t{1} << 18;

}  // namespace

void CheckImportOptions(const ImportOptions& o) {
  if (o.node_id_bytes != 0 && o.node_id_bytes != 4 && o.node_id_bytes != 8) {
    throw Error::Input("--node-id-bytes must be 4 or 8");
  }
}

uint32_t ImportNodeIdBytes(const ImportOptions& o, uint64_t num_nodes) {
  uint32_t automatic = NodeIdBytesFor(num_nodes);
  if (o.node_id_bytes == 4 && automatic == 8) {
    throw Error::Input("more than 2^32 nodes need 8-byte node ids");
  }
  return o.node_id_bytes ? o.node_id_bytes : automatic;
}

std::unique_ptr<ProgressBar> MakeImportProgress(const ImportOptions& o) {
  return o.progress ? std::make_unique<ProgressBar>("importing", 0) : nullptr;
}

void AddImportedEdges(CscBuilder& builder, std::span<const uint64_t> src,
                      std::span<const uint64_t> dst, bool undirected) {
  builder.Add(src, dst);
  if (undirected) builder.Add(dst, src);
}

// Streams edge_index [2, E] into the builder, checking every id against num_nodes.
void ReadEdgeIndex(const NpyReader& edges, uint64_t num_nodes, bool undirected,
                   MemoryBudget& budget, CscBuilder& builder, ProgressBar* progress) {
  const NpyHeader& h = edges.header();
  if (h.shape.size() != 2 || h.shape[0] != 2) {
    throw Error::Input(
        fmt::format("edge_index must have shape (2, E), found {}", NpyShapeString(h.shape)),
        edges.path());
  }
  if (!NpyIsInteger(h.dtype)) {
    throw Error::Input(
        fmt::format("edge_index must hold integers, found {}", NpyDtypeName(h.dtype)),
        edges.path());
  }
  const uint64_t num_edges = h.shape[1];
  ChargedArray<int64_t> raw(budget, 2 * kEdgeChunk, "the edge import buffer");
  ChargedArray<uint64_t> ids(budget, 2 * kEdgeChunk, "the edge import buffer");
  if (progress) progress->Restart("reading edges", num_edges);
  for (uint64_t first = 0; first < num_edges; first += kEdgeChunk) {
    uint64_t count = std::min(kEdgeChunk, num_edges - first);
    for (int row = 0; row < 2; ++row) {
      int64_t* in = raw.data() + row * kEdgeChunk;
      uint64_t* out = ids.data() + row * kEdgeChunk;
      edges.ReadInt64(row * num_edges + first, {in, count});
      for (uint64_t i = 0; i < count; ++i) {
        if (in[i] < 0 || static_cast<uint64_t>(in[i]) >= num_nodes) {
          throw Error::Input(in[i] < 0
                                 ? fmt::format("node id {} is negative", in[i])
                                 : fmt::format("node id {} is >= num_nodes {}", in[i], num_nodes),
                             edges.path(), fmt::format("element [{}, {}]", row, first + i));
        }
        out[i] = static_cast<uint64_t>(in[i]);
      }
    }
    AddImportedEdges(builder, {ids.data(), count}, {ids.data() + kEdgeChunk, count}, undirected);
    ThrowIfInterrupted();
    if (progress) progress->Update(first + count);
  }
}

}  // namespace strata
