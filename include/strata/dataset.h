// The on-disk dataset, format version 1 (docs/format.md): what meta.json records, the names
// of the files, how a feature row is laid out, and Dataset, an opened dataset directory.
//
// Invariants of a published dataset: every file listed in `files` exists with exactly the
// recorded size and xxh64; indptr has num_nodes + 1 entries ending at num_edges; every id is
// below num_nodes; feature row i starts at byte i * row_stride_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/file_digest.h"
#include "strata/memory_budget.h"

namespace strata {

inline constexpr const char* kDatasetFormatName = "strata-dataset";
inline constexpr int kDatasetFormatVersion = 1;
// Minor versions add what a version-1 reader may ignore: 1 adds the partitioned layout
// (partition/ and meta.json's "partition" object).
inline constexpr int kDatasetFormatMinorVersion = 1;
inline constexpr uint32_t kBlockBytes = 4096;
// Node ids are below 2^48 (281 trillion nodes): far beyond any graph, and it keeps a node
// count plus one, or an id taken from untrusted text, from overflowing anything.
inline constexpr uint64_t kMaxNodeIds = uint64_t{1} << 48;

// The files of a dataset, relative to its directory. Readers reach them through
// Dataset::PathOf and writers through DatasetWriter::PathOf, so each name is spelt once.
inline constexpr std::string_view kMetaFile = "meta.json";
inline constexpr std::string_view kIndptrFile = "graph/indptr.bin";
inline constexpr std::string_view kIndicesFile = "graph/indices.bin";
inline constexpr std::string_view kFeaturesFile = "features.bin";
inline constexpr std::string_view kLabelsFile = "labels.bin";
// Sparse features (minor version 2): CSR instead of features.bin.
inline constexpr std::string_view kSparseIndptrFile = "features/indptr.bin";
inline constexpr std::string_view kSparseIndicesFile = "features/indices.bin";
inline constexpr std::string_view kSparseValuesFile = "features/values.bin";
// The partitioned layout (minor version 1, written by `strata partition`).
inline constexpr std::string_view kPartitionOffsetsFile = "partition/offsets.bin";
inline constexpr std::string_view kPartitionOriginalIdsFile = "partition/original_ids.bin";
inline constexpr std::string_view kHubIdsFile = "partition/hubs.bin";
inline constexpr std::string_view kHubFeaturesFile = "partition/hub_features.bin";
inline constexpr std::string_view kHubIndptrFile = "partition/hub_indptr.bin";
inline constexpr std::string_view kHubIndicesFile = "partition/hub_indices.bin";

enum class Split { kTrain, kVal, kTest };
inline constexpr Split kAllSplits[] = {Split::kTrain, Split::kVal, Split::kTest};
std::string_view SplitName(Split split);  // "train" | "val" | "test"
std::string_view SplitFile(Split split);  // "split/train.bin", ...

// A node id stored in `width` (4 or 8) little-endian bytes, as in indices.bin and the splits.
inline uint64_t LoadNodeId(const std::byte* p, uint32_t width) {
  // The usual widths as fixed-size loads: a memcpy of a run-time length is a library call,
  // once per edge on the hot paths.
  if (width == 4) {
    uint32_t id;
    std::memcpy(&id, p, 4);
    return id;
  }
  if (width == 8) {
    uint64_t id;
    std::memcpy(&id, p, 8);
    return id;
  }
  uint64_t id = 0;
  std::memcpy(&id, p, width);
  return id;
}

enum class FeatureDtype { kFloat32, kFloat16 };

std::string_view FeatureDtypeName(FeatureDtype dtype);  // "float32" | "float16"
uint32_t FeatureDtypeBytes(FeatureDtype dtype);
// "float32" or "float16"; anything else is an input error naming `source`.
FeatureDtype ParseFeatureDtype(std::string_view name, const std::string& source);

// Bytes between consecutive feature rows: the smallest power of two holding the row when it
// fits in a block (so rows never straddle a block), otherwise the row rounded up to whole
// blocks (so rows start on a block boundary). 0 when there are no features.
uint64_t RowStrideBytes(uint64_t feature_dim, FeatureDtype dtype);

// In-degree statistics of the CSC, computed while it is written.
struct DegreeStats {
  uint64_t min = 0;
  uint64_t max = 0;
  double mean = 0;
  uint64_t zero_count = 0;  // nodes without in-neighbours
};

// How a partitioned dataset was made (meta.json's "partition" object).
struct PartitionMeta {
  std::string method;  // "gap" | "random" | "metis"
  uint32_t parts = 0;
  uint64_t hubs = 0;
  double edge_cut_ratio = 0;  // stored edges whose ends lie in different partitions
  // Max over partitions of the total-variation distance between the partition's training
  // label histogram and the whole training set's: 0 is perfect balance, 1 disjoint labels.
  double label_balance = 0;
  uint64_t max_part_nodes = 0, min_part_nodes = 0;
  double seconds = 0;           // partitioning and writing
  uint64_t peak_rss_bytes = 0;  // of the process that partitioned
  // The partitioner alone: from opening the input to the assignment, before hubs and writing.
  double partitioner_seconds = 0;
  uint64_t partitioner_peak_rss_bytes = 0;
  std::string source;  // the input dataset's directory
};

struct DatasetMeta {
  uint64_t num_nodes = 0;
  uint64_t num_edges = 0;
  uint64_t feature_dim = 0;
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  uint64_t row_stride_bytes = 0;
  uint32_t num_classes = 0;
  uint32_t node_id_bytes = 4;
  uint32_t block_size = kBlockBytes;
  DegreeStats in_degree;
  uint64_t train_size = 0, val_size = 0, test_size = 0;
  std::map<std::string, FileDigest> files;  // relative path -> size and checksum
  int minor_version = 0;
  std::optional<PartitionMeta> partition;  // set for a partitioned layout
  // CSR features (features/*.bin) instead of dense rows in features.bin.
  bool sparse_features = false;
  uint64_t feature_nnz = 0;  // stored values of the CSR features

  uint64_t split_size(Split split) const;

  std::string ToJson() const;
  // Parses meta.json text; errors name `source`.
  static DatasetMeta FromJson(const std::string& text, const std::string& source);
};

// Node ids are 4 bytes while they fit, 8 bytes from 2^32 nodes on.
uint32_t NodeIdBytesFor(uint64_t num_nodes);

// Dataset is an opened dataset directory: its meta.json, read and checked once, and the
// paths of its files. Everything that reads a dataset (the graph, the feature stores, the
// trainer, the benchmarks) takes one, so no reader rebuilds a path from the directory name.
//
// Invariant: meta() passed FromJson's checks, lists every file of the format, and every
// listed file existed with its recorded size when the dataset was opened. Cheap to copy.
class Dataset {
 public:
  // Reads and checks DIR/meta.json and that every file it lists exists with its recorded
  // size; throws an input error naming the directory or file otherwise.
  static Dataset Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  const DatasetMeta& meta() const { return meta_; }

  // DIR/relative, for one of the k*File names above or SplitFile(split).
  std::string PathOf(std::string_view relative) const;

  // The node ids of a split; an id >= num_nodes is an input error naming the file.
  std::vector<uint64_t> ReadSplit(Split split) const;
  // labels.bin (num_nodes labels, -1 for unlabelled), charged to `budget`.
  ChargedArray<int32_t> ReadLabels(MemoryBudget& budget) const;

  // Recomputes the size and xxh64 of every listed file, then checks what the files mean
  // (offsets, ids, labels, splits, the partitioned layout; src/dataset/dataset_contents.h),
  // charging a bit per node to `budget`; throws an input error naming the first file that is
  // wrong, and the position where there is one.
  void Verify(MemoryBudget& budget) const;

 private:
  Dataset(std::string dir, DatasetMeta meta) : dir_(std::move(dir)), meta_(std::move(meta)) {}

  std::string dir_;
  DatasetMeta meta_;
};

}  // namespace strata
