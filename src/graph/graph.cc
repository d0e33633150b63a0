#include "strata/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "common/enum_names.h"
#include "dataset/stored_ids.h"
#include "graph/disk_adjacency.h"
#include "graph/hotness.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr EnumNames<TopologyPlacement, 3> kPlacementNames("topology",
                                                          {{{TopologyPlacement::kAuto, "auto"},
                                                            {TopologyPlacement::kMemory, "memory"},
                                                            {TopologyPlacement::kDisk, "disk"}}});

// Reads the sources of ranges of stored edges into a charged buffer: from the graph's memory, or
// from indices.bin (`path`, ids `width` bytes wide) when the topology is on disk.
class EdgeScan {
 public:
  EdgeScan(const CscGraph& graph, const std::string& path, uint32_t width, uint64_t capacity,
           MemoryBudget& budget)
      : graph_(graph),
        width_(width),
        sources_(budget, std::min(capacity, graph.num_edges()), "edge scan buffer") {
    if (path.empty()) return;
    path_ = path;
    raw_ = ChargedArray<std::byte>(budget, sources_.size() * width, "edge scan buffer");
    file_ = std::make_unique<FileReader>(path);
  }

  // Edges [first, first + count), count at most the capacity.
  std::span<const uint64_t> Read(uint64_t first, uint64_t count) {
    if (file_) {
      file_->ReadExact(first * width_, raw_.data(), count * width_);
      for (uint64_t i = 0; i < count; ++i) {
        sources_[i] = CheckedStoredId(LoadNodeId(raw_.data() + i * width_, width_), first + i,
                                      graph_.num_nodes(), path_);
      }
    } else {
      for (uint64_t i = 0; i < count; ++i) sources_[i] = graph_.Source(first + i);
    }
    return {sources_.data(), count};
  }

 private:
  const CscGraph& graph_;
  std::string path_;
  uint32_t width_;
  ChargedArray<uint64_t> sources_;
  ChargedArray<std::byte> raw_;
  std::unique_ptr<FileReader> file_;
};

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
  CheckRowOffsets({indptr_.data(), num_nodes_ + 1}, 0, num_nodes_, num_edges_, indptr_path);
  const uint64_t topology_bytes = (num_nodes_ + 1) * 8 + num_edges_ * id_bytes;
  const bool on_disk =
      options.placement == TopologyPlacement::kDisk ||
      (options.placement == TopologyPlacement::kAuto && topology_bytes > budget.limit() / 2);
  if (on_disk) {
    adjacency_ = std::make_unique<DiskAdjacency>(indices_path_, id_bytes, num_edges_, num_nodes_,
                                                 options.io, budget);
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
    CheckStoredIds(reinterpret_cast<const std::byte*>(indices64_.data()), num_edges_, 8, 0,
                   num_nodes_, indices_path_);
  } else {
    indices32_ = ChargedArray<uint32_t>(budget, num_edges_, "the graph's indices");
    ReadArrayFile(indices_path_, indices32_.data(), num_edges_);
    CheckStoredIds(reinterpret_cast<const std::byte*>(indices32_.data()), num_edges_, 4, 0,
                   num_nodes_, indices_path_);
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
  EdgeScan scan(*this, adjacency_ ? indices_path_ : "", wide_ ? 8 : 4, kScanChunkEdges, budget_);
  for (uint64_t first = 0; first < num_edges_; first += kScanChunkEdges) {
    fn(first, scan.Read(first, std::min(kScanChunkEdges, num_edges_ - first)));
  }
}

void CscGraph::ForEachRowBlock(
    const std::function<void(uint64_t, uint64_t, std::span<const uint64_t>)>& fn,
    uint64_t block_edges, uint64_t rows_begin, uint64_t rows_end) const {
  rows_end = std::min(rows_end, num_nodes_);
  uint64_t widest = 0;
  for (uint64_t v = rows_begin; v < rows_end; ++v) widest = std::max(widest, InDegree(v));
  EdgeScan scan(*this, adjacency_ ? indices_path_ : "", wide_ ? 8 : 4,
                std::max(block_edges, widest), budget_);
  const uint64_t* indptr = indptr_.data();
  for (uint64_t begin = rows_begin, end; begin < rows_end; begin = end) {
    // The most rows whose edges fit a block, at least one.
    const uint64_t* past =
        std::upper_bound(indptr + begin + 1, indptr + rows_end + 1, indptr[begin] + block_edges);
    end = std::max<uint64_t>(begin + 1, past - 1 - indptr);
    fn(begin, end, scan.Read(indptr[begin], indptr[end] - indptr[begin]));
  }
}

AdjacencyStats CscGraph::adjacency_stats() const {
  return adjacency_ ? adjacency_->stats() : AdjacencyStats{};
}

}  // namespace strata
