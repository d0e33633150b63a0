#include "dataset/edge_list_export.h"

#include <charconv>
#include <vector>

#include "common/interrupt.h"
#include "dataset/stored_ids.h"
#include "storage/file.h"
#include "storage/staged_file.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {

uint64_t ExportEdgeList(const std::string& dataset_dir, const std::string& out_path) {
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  const Dataset dataset = Dataset::Open(dataset_dir);
  const DatasetMeta& meta = dataset.meta();
  const std::string indptr_path = dataset.PathOf(kIndptrFile);
  const std::string indices_path = dataset.PathOf(kIndicesFile);
  FileReader indptr(indptr_path);
  FileReader indices(indices_path);
  StagedFile out(out_path);
  std::vector<uint64_t> offsets(kChunk + 1);
  std::vector<std::byte> ids(kChunk * meta.node_id_bytes);
  uint64_t id_buffer_first = 0, id_buffer_count = 0;
  auto id_at = [&](uint64_t e) {
    if (e < id_buffer_first || e >= id_buffer_first + id_buffer_count) {
      id_buffer_first = e;
      id_buffer_count = std::min(kChunk, meta.num_edges - e);
      indices.ReadExact(e * meta.node_id_bytes, ids.data(), id_buffer_count * meta.node_id_bytes);
    }
    return CheckedStoredId(
        LoadNodeId(ids.data() + (e - id_buffer_first) * meta.node_id_bytes, meta.node_id_bytes), e,
        meta.num_nodes, indices_path);
  };
  char line[48];
  for (uint64_t first = 0; first < meta.num_nodes; first += kChunk) {
    uint64_t count = std::min(kChunk, meta.num_nodes - first);
    indptr.ReadExact(first * 8, offsets.data(), (count + 1) * 8);
    CheckRowOffsets({offsets.data(), count + 1}, first, meta.num_nodes, meta.num_edges,
                    indptr_path);
    for (uint64_t i = 0; i < count; ++i) {
      for (uint64_t e = offsets[i]; e < offsets[i + 1]; ++e) {
        char* p = std::to_chars(line, line + 20, id_at(e)).ptr;
        *p++ = ' ';
        p = std::to_chars(p, p + 20, first + i).ptr;
        *p++ = '\n';
        out.writer().Append(line, static_cast<size_t>(p - line));
      }
    }
    ThrowIfInterrupted();
  }
  out.Publish();
  return meta.num_edges;
}

}  // namespace strata
