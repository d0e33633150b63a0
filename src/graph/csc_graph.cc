#include "graph/csc_graph.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

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

CscGraph::CscGraph(const std::string& dir, const DatasetMeta& meta, MemoryBudget& budget)
    : num_nodes_(meta.num_nodes), num_edges_(meta.num_edges), wide_(meta.node_id_bytes == 8) {
  indptr_ = ChargedArray<uint64_t>(budget, num_nodes_ + 1, "the graph's indptr");
  ReadArray(dir + "/graph/indptr.bin", indptr_.data(), num_nodes_ + 1);
  if (indptr_[0] != 0 || indptr_[num_nodes_] != num_edges_) {
    throw Error::Input(fmt::format("indptr does not run from 0 to num_edges {}", num_edges_),
                       dir + "/graph/indptr.bin");
  }
  if (wide_) {
    indices64_ = ChargedArray<uint64_t>(budget, num_edges_, "the graph's indices");
    ReadArray(dir + "/graph/indices.bin", indices64_.data(), num_edges_);
  } else {
    indices32_ = ChargedArray<uint32_t>(budget, num_edges_, "the graph's indices");
    ReadArray(dir + "/graph/indices.bin", indices32_.data(), num_edges_);
  }
}

std::vector<uint64_t> ReadSplit(const std::string& dir, const DatasetMeta& meta,
                                const std::string& split) {
  std::string path = dir + "/split/" + split + ".bin";
  std::string bytes = ReadWholeFile(path);
  const uint32_t width = meta.node_id_bytes;
  std::vector<uint64_t> ids(bytes.size() / width);
  for (size_t i = 0; i < ids.size(); ++i) {
    uint64_t id = 0;
    std::memcpy(&id, bytes.data() + i * width, width);
    if (id >= meta.num_nodes) {
      throw Error::Input(fmt::format("node id {} is >= num_nodes {}", id, meta.num_nodes), path,
                         fmt::format("element [{}]", i));
    }
    ids[i] = id;
  }
  return ids;
}

}  // namespace strata
