// Fuzzes EdgeListReader over a whole edge-list file: ids, separators, comments, line ends, and
// lines that straddle the reader's reads. The file is read through a 64-byte buffer, so that
// most inputs carry lines over from one read to the next; what that accepts must read the same
// through a 4 KiB buffer, and be refused with num_nodes set to its largest id.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "dataset/edge_list_reader.h"
#include "fuzz_support.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using Edges = std::vector<std::pair<uint64_t, uint64_t>>;

uint64_t MaxId(const Edges& edges) {
  uint64_t max_id = 0;
  for (const auto& [src, dst] : edges) max_id = std::max({max_id, src, dst});
  return max_id;
}

Edges ReadEdges(const std::string& path, std::optional<uint64_t> num_nodes, size_t buffer_bytes) {
  EdgeListReader reader(path, num_nodes, buffer_bytes);
  Edges edges;
  reader.ReadAll([&](std::span<const uint64_t> src, std::span<const uint64_t> dst) {
    fuzz::Check(src.size() == dst.size() && !src.empty(), "a batch of unequal or no ids");
    for (size_t i = 0; i < src.size(); ++i) edges.emplace_back(src[i], dst[i]);
  });
  fuzz::Check(reader.any_edge() == !edges.empty(), "any_edge() differs from the edges read");
  fuzz::Check(MaxId(edges) == reader.max_id_seen(), "max_id_seen() differs from the edges read");
  fuzz::Check(MaxId(edges) < kMaxNodeIds, "an id at or above kMaxNodeIds was accepted");
  return edges;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzInputFile file;
  const std::string& path = file.Write(data, size);
  fuzz::AcceptInputErrors([&] {
    const Edges edges = ReadEdges(path, std::nullopt, 64);
    fuzz::Check(ReadEdges(path, std::nullopt, 4096) == edges,
                "the edges depend on the reader's buffer size");
    if (edges.empty()) return;
    bool refused = false;
    try {
      ReadEdges(path, MaxId(edges), 64);
    } catch (const Error& e) {
      refused = e.kind() == Error::Kind::kInput;
    }
    fuzz::Check(refused, "an id equal to num_nodes was accepted");
  });
  return 0;
}

}  // namespace strata
