#include "dataset/dataset_contents.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dataset/node_bits.h"
#include "dataset/stored_ids.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << 20;  // values read at a time

// Calls fn(first, values) over consecutive chunks of the `count` values `width` bytes wide at
// the start of `file`, in order; a chunk shares its first value with the previous chunk's last
// when `overlap` (so that offsets can be compared across chunks).
void ForEachChunk(const FileReader& file, uint64_t count, uint32_t width, bool overlap,
                  const std::function<void(uint64_t, const std::byte*, uint64_t)>& fn) {
  std::vector<std::byte> bytes(std::min(count, kChunk + 1) * width);
  const uint64_t step = overlap ? kChunk : kChunk + 1;
  for (uint64_t first = 0; first < count; first += step) {
    const uint64_t n = std::min(count - first, kChunk + 1);
    file.ReadExact(first * width, bytes.data(), n * width);
    fn(first, bytes.data(), n);
    if (first + n == count) break;
  }
}

// Checks a file of rows + 1 offsets rising from 0 to `end`; calls per_row(row, length) for each
// row when given.
void CheckOffsetsFile(const std::string& path, uint64_t rows, uint64_t end,
                      const std::function<void(uint64_t, uint64_t)>& per_row = {}) {
  const FileReader file(path);
  ForEachChunk(file, rows + 1, 8, true, [&](uint64_t first, const std::byte* bytes, uint64_t n) {
    std::vector<uint64_t> offsets(n);
    std::memcpy(offsets.data(), bytes, n * 8);
    CheckRowOffsets(offsets, first, rows, end, path);
    if (per_row) {
      for (uint64_t i = 0; i + 1 < n; ++i) per_row(first + i, offsets[i + 1] - offsets[i]);
    }
  });
}

// Checks a file of `count` ids `width` bytes wide, each below `bound`; calls per_id(element,
// id) for each when given.
void CheckIdsFile(const std::string& path, uint64_t count, uint32_t width, uint64_t bound,
                  const std::function<void(uint64_t, uint64_t)>& per_id = {}) {
  const FileReader file(path);
  ForEachChunk(file, count, width, false, [&](uint64_t first, const std::byte* bytes, uint64_t n) {
    CheckStoredIds(bytes, n, width, first, bound, path);
    if (per_id) {
      for (uint64_t i = 0; i < n; ++i) per_id(first + i, LoadNodeId(bytes + i * width, width));
    }
  });
}

// CheckIdsFile, each id also unmet in `seen`, which it fills; `repeat` says what a repeat is.
void CheckDistinctIdsFile(const std::string& path, uint64_t count, uint32_t width, NodeBits& seen,
                          std::string_view repeat) {
  CheckIdsFile(path, count, width, seen.num_nodes(), [&](uint64_t element, uint64_t v) {
    if (seen.TestAndSet(v)) {
      throw Error::Input(fmt::format("node {} {}", v, repeat), path,
                         fmt::format("element [{}]", element));
    }
  });
}

void CheckGraph(const Dataset& dataset) {
  const DatasetMeta& meta = dataset.meta();
  const std::string indptr_path = dataset.PathOf(kIndptrFile);
  DegreeStats seen;
  seen.min = meta.num_nodes == 0 ? 0 : UINT64_MAX;
  CheckOffsetsFile(indptr_path, meta.num_nodes, meta.num_edges, [&](uint64_t, uint64_t degree) {
    seen.min = std::min(seen.min, degree);
    seen.max = std::max(seen.max, degree);
    seen.zero_count += degree == 0;
  });
  const DegreeStats& recorded = meta.in_degree;
  if (seen.min != recorded.min || seen.max != recorded.max ||
      seen.zero_count != recorded.zero_count) {
    throw Error::Input(
        fmt::format("in-degrees run from {} to {} with {} zero, meta.json records {} to {} with {}",
                    seen.min, seen.max, seen.zero_count, recorded.min, recorded.max,
                    recorded.zero_count),
        indptr_path);
  }
  CheckIdsFile(dataset.PathOf(kIndicesFile), meta.num_edges, meta.node_id_bytes, meta.num_nodes);
}

void CheckLabelsAndSplits(const Dataset& dataset, NodeBits& in_a_split) {
  const DatasetMeta& meta = dataset.meta();
  const std::string labels_path = dataset.PathOf(kLabelsFile);
  ForEachChunk(FileReader(labels_path), meta.num_nodes, 4, false,
               [&](uint64_t first, const std::byte* bytes, uint64_t n) {
                 std::vector<int32_t> labels(n);
                 std::memcpy(labels.data(), bytes, n * 4);
                 CheckStoredLabels(labels.data(), n, first, meta.num_classes, labels_path);
               });
  for (Split split : kAllSplits) {
    CheckDistinctIdsFile(dataset.PathOf(SplitFile(split)), meta.split_size(split),
                         meta.node_id_bytes, in_a_split,
                         "is in this split twice or in an earlier one too (train, val, test)");
  }
}

void CheckSparseFeatures(const Dataset& dataset) {
  const DatasetMeta& meta = dataset.meta();
  CheckOffsetsFile(dataset.PathOf(kSparseIndptrFile), meta.num_nodes, meta.feature_nnz);
  CheckIdsFile(dataset.PathOf(kSparseIndicesFile), meta.feature_nnz, 4, meta.feature_dim);
}

void CheckPartition(const Dataset& dataset, NodeBits& seen) {
  const DatasetMeta& meta = dataset.meta();
  const PartitionMeta& partition = *meta.partition;
  CheckOffsetsFile(dataset.PathOf(kPartitionOffsetsFile), partition.parts, meta.num_nodes);
  CheckDistinctIdsFile(dataset.PathOf(kPartitionOriginalIdsFile), meta.num_nodes,
                       meta.node_id_bytes, seen, "appears twice among the original ids");
  seen.Clear();
  CheckDistinctIdsFile(dataset.PathOf(kHubIdsFile), partition.hubs, meta.node_id_bytes, seen,
                       "appears twice among the hubs");
  const std::string hub_indices_path = dataset.PathOf(kHubIndicesFile);
  const uint64_t hub_edges = meta.files.at(std::string(kHubIndicesFile)).bytes / meta.node_id_bytes;
  CheckOffsetsFile(dataset.PathOf(kHubIndptrFile), partition.hubs, hub_edges);
  CheckIdsFile(hub_indices_path, hub_edges, meta.node_id_bytes, meta.num_nodes);
}

}  // namespace

void CheckDatasetContents(const Dataset& dataset, MemoryBudget& budget) {
  const DatasetMeta& meta = dataset.meta();
  NodeBits bits(meta.num_nodes, budget);
  CheckGraph(dataset);
  CheckLabelsAndSplits(dataset, bits);
  if (meta.sparse_features) CheckSparseFeatures(dataset);
  if (meta.partition) {
    bits.Clear();
    CheckPartition(dataset, bits);
  }
}

}  // namespace strata
