#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "common/enum_names.h"
#include "graph/disk_adjacency.h"
#include "graph/hotness.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/graph.h"

namespace strata {
namespace {

constexpr EnumNames<TopologyPlacement, 3> kPlacementNames("topology",
                                                          {{{TopologyPlacement::kAuto, "auto"},
                                                            {TopologyPlacement::kMemory, "memory"},
                                                            {TopologyPlacement::kDisk, "disk"}}});

}  // namespace

TopologyPlacement ParseTopologyPlacement(std::string_view name) {
  return kPlacementNames.Parse(name);
}

std::string_view TopologyPlacementName(TopologyPlacement placement) {
  return kPlacementNames.Name(placement);
}

CscGraph::CscGraph(const Dataset& dataset, MemoryBudget& budget, const TopologyOptions& options)
    : indices_path_(dataset.PathOf(kIndicesFile)),
      num_nodes_(dataset.meta().num_nodes),
      num_edges_(dataset.meta().num_edges),
      wide_(dataset.meta().node_id_bytes == 8),
      budget_(budget) {
  const uint32_t id_bytes = dataset.meta().node_id_bytes;
  const std::string indptr_path = dataset.PathOf(kIndptrFile);
  indptr_ = ChargedArray<uint64_t>(budget, num_nodes_ + 1, "the graph's indptr");
  ReadArrayFile(indptr_path, indptr_.data(), num_nodes_ + 1);
  if (indptr_[0] != 0 || indptr_[num_nodes_] != num_edges_) {
    throw Error::Input(fmt::format("indptr does not run from 0 to num_edges {}", num_edges_),
                       indptr_path);
  }
  const uint64_t topology_bytes = (num_nodes_ + 1) * 8 + num_edges_ * id_bytes;
  const bool on_disk =
      options.placement == TopologyPlacement::kDisk ||
      (options.placement == TopologyPlacement::kAuto && topology_bytes > budget.limit() / 2);
  if (on_disk) {
    adjacency_ =
        std::make_unique<DiskAdjacency>(indices_path_, id_bytes, num_edges_, options.io, budget);
    const uint64_t cache_bytes = options.adjacency_cache_bytes >= 0
                                     ? static_cast<uint64_t>(options.adjacency_cache_bytes)
                                     : budget.limit() / 8;
    if (cache_bytes > 0) {
      // DUCATI's value density: how often a node's list is sampled (it is sampled when the
      // node is picked as a neighbour, so about its out-degree) per byte the list occupies.
      ChargedArray<float> density = DegreeScores(*this, budget);
      for (uint64_t v = 0; v < num_nodes_; ++v) {
        density[v] /= static_cast<float>(std::max<uint64_t>(1, InDegree(v)));
      }
      adjacency_->FillCache({indptr_.data(), num_nodes_ + 1}, {density.data(), num_nodes_},
                            cache_bytes, budget);
    }
  } else if (wide_) {
    indices64_ = ChargedArray<uint64_t>(budget, num_edges_, "the graph's indices");
    ReadArrayFile(indices_path_, indices64_.data(), num_edges_);
  } else {
    indices32_ = ChargedArray<uint32_t>(budget, num_edges_, "the graph's indices");
    ReadArrayFile(indices_path_, indices32_.data(), num_edges_);
  }
}

CscGraph::CscGraph(ChargedArray<uint64_t> indptr, ChargedArray<uint32_t> indices,
                   MemoryBudget& budget)
    : num_nodes_(indptr.size() - 1),
      num_edges_(indices.size()),
      wide_(false),
      indptr_(std::move(indptr)),
      indices32_(std::move(indices)),
      budget_(budget) {
  if (indptr_.size() == 0 || indptr_[num_nodes_] != num_edges_) {
    throw Error::Internal("CscGraph: indptr does not end at the number of edges");
  }
}

CscGraph::~CscGraph() = default;

void CscGraph::ResolveSources(std::span<uint64_t> edges) const {
  if (adjacency_) {
    adjacency_->Resolve(edges);
    return;
  }
  for (uint64_t& e : edges) e = Source(e);
}

void CscGraph::ForEachSourceChunk(
    const std::function<void(uint64_t, std::span<const uint64_t>)>& fn) const {
  constexpr uint64_t kChunkEdges = kScanChunkEdges;
  const uint32_t width = wide_ ? 8 : 4;
  ChargedArray<uint64_t> sources(budget_, std::min(kChunkEdges, num_edges_), "edge scan buffer");
  ChargedArray<std::byte> raw;
  std::unique_ptr<FileReader> file;
  if (adjacency_) {
    raw = ChargedArray<std::byte>(budget_, std::min(kChunkEdges, num_edges_) * width,
                                  "edge scan buffer");
    file = std::make_unique<FileReader>(indices_path_);
  }
  for (uint64_t first = 0; first < num_edges_; first += kChunkEdges) {
    const uint64_t count = std::min(kChunkEdges, num_edges_ - first);
    if (file) {
      file->ReadExact(first * width, raw.data(), count * width);
      for (uint64_t i = 0; i < count; ++i) sources[i] = LoadNodeId(raw.data() + i * width, width);
    } else {
      for (uint64_t i = 0; i < count; ++i) sources[i] = Source(first + i);
    }
    fn(first, {sources.data(), count});
  }
}

AdjacencyStats CscGraph::adjacency_stats() const {
  return adjacency_ ? adjacency_->stats() : AdjacencyStats{};
}

}  // namespace strata
