#include "graph/csc_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "graph/hotness.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

template <typename T>
void ReadArray(const std::string& path, T* out, uint64_t count) {
  FileReader file(path);
  constexpr uint64_t kChunk = uint64_t{64} << 20;
  const uint64_t bytes = count * sizeof(T);
  auto* dst = reinterpret_cast<std::byte*>(out);
  for (uint64_t done = 0; done < bytes; done += kChunk) {
    file.ReadExact(done, dst + done, std::min(kChunk, bytes - done));
  }
}

}  // namespace

CscGraph::CscGraph(const std::string& dir, const DatasetMeta& meta, MemoryBudget& budget,
                   const TopologyOptions& options)
    : indices_path_(dir + "/graph/indices.bin"),
      num_nodes_(meta.num_nodes),
      num_edges_(meta.num_edges),
      wide_(meta.node_id_bytes == 8),
      budget_(budget) {
  indptr_ = ChargedArray<uint64_t>(budget, num_nodes_ + 1, "the graph's indptr");
  ReadArray(dir + "/graph/indptr.bin", indptr_.data(), num_nodes_ + 1);
  if (indptr_[0] != 0 || indptr_[num_nodes_] != num_edges_) {
    throw Error::Input(fmt::format("indptr does not run from 0 to num_edges {}", num_edges_),
                       dir + "/graph/indptr.bin");
  }
  if (options.on_disk) {
    adjacency_ = std::make_unique<DiskAdjacency>(indices_path_, meta.node_id_bytes, num_edges_,
                                                 options.io, budget);
    if (options.adjacency_cache_bytes > 0) {
      // DUCATI's value density: how often a node's list is sampled (it is sampled when the
      // node is picked as a neighbour, so about its out-degree) per byte the list occupies.
      ChargedArray<float> density = DegreeScores(*this, budget);
      for (uint64_t v = 0; v < num_nodes_; ++v) {
        density[v] /= static_cast<float>(std::max<uint64_t>(1, InDegree(v)));
      }
      adjacency_->FillCache({indptr_.data(), num_nodes_ + 1}, {density.data(), num_nodes_},
                            options.adjacency_cache_bytes, budget);
    }
  } else if (wide_) {
    indices64_ = ChargedArray<uint64_t>(budget, num_edges_, "the graph's indices");
    ReadArray(indices_path_, indices64_.data(), num_edges_);
  } else {
    indices32_ = ChargedArray<uint32_t>(budget, num_edges_, "the graph's indices");
    ReadArray(indices_path_, indices32_.data(), num_edges_);
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
  constexpr uint64_t kChunkEdges = uint64_t{1} << 20;
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

std::vector<uint64_t> ReadSplit(const std::string& dir, const DatasetMeta& meta,
                                const std::string& split) {
  std::string path = dir + "/split/" + split + ".bin";
  std::string bytes = ReadWholeFile(path);
  const uint32_t width = meta.node_id_bytes;
  std::vector<uint64_t> ids(bytes.size() / width);
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t id =
        LoadNodeId(reinterpret_cast<const std::byte*>(bytes.data()) + i * width, width);
    if (id >= meta.num_nodes) {
      throw Error::Input(fmt::format("node id {} is >= num_nodes {}", id, meta.num_nodes), path,
                         fmt::format("element [{}]", i));
    }
    ids[i] = id;
  }
  return ids;
}

}  // namespace strata
