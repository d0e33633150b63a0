#include "strata/dataset.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/enum_names.h"
#include "common/json_fields.h"
#include "dataset/dataset_contents.h"
#include "dataset/stored_ids.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {

namespace {

constexpr EnumNames<Split, 3> kSplitNames(
    "split", {{{Split::kTrain, "train"}, {Split::kVal, "val"}, {Split::kTest, "test"}}});
constexpr EnumNames<Split, 3> kSplitFiles("split file", {{{Split::kTrain, "split/train.bin"},
                                                          {Split::kVal, "split/val.bin"},
                                                          {Split::kTest, "split/test.bin"}}});

// A file's checksum as ToJson writes it, hexadecimal. std::stoull would also take a sign,
// spaces, "0x" and trailing junk, and throws std::out_of_range beyond 64 bits.
uint64_t ParseXxh64(const std::string& hex, const std::string& source) {
  uint64_t value = 0;
  const char* end = hex.data() + hex.size();
  auto [stop, error] = std::from_chars(hex.data(), end, value, 16);
  if (hex.empty() || error != std::errc() || stop != end) {
    throw Error::Input(
        fmt::format("meta.json has an xxh64 '{}' that is not a 64-bit hexadecimal number",
                    hex.size() > 40 ? hex.substr(0, 40) + "..." : hex),
        source);
  }
  return value;
}

}  // namespace

std::string_view SplitName(Split split) { return kSplitNames.Name(split); }
std::string_view SplitFile(Split split) { return kSplitFiles.Name(split); }

std::string_view FeatureDtypeName(FeatureDtype dtype) {
  return dtype == FeatureDtype::kFloat16 ? "float16" : "float32";
}

uint32_t FeatureDtypeBytes(FeatureDtype dtype) { return dtype == FeatureDtype::kFloat16 ? 2 : 4; }

FeatureDtype ParseFeatureDtype(std::string_view name, const std::string& source) {
  if (name == "float32") return FeatureDtype::kFloat32;
  if (name == "float16") return FeatureDtype::kFloat16;
  throw Error::Input(fmt::format("feature dtype '{}' is not float32 or float16", name), source);
}

uint64_t RowStrideBytes(uint64_t feature_dim, FeatureDtype dtype) {
  uint64_t row = feature_dim * FeatureDtypeBytes(dtype);
  if (row == 0) return 0;
  if (row > kBlockBytes) return (row + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  uint64_t stride = 1;
  while (stride < row) stride <<= 1;
  return stride;
}

uint32_t NodeIdBytesFor(uint64_t num_nodes) { return num_nodes <= (uint64_t{1} << 32) ? 4 : 8; }

uint64_t DatasetMeta::split_size(Split split) const {
  switch (split) {
    case Split::kTrain:
      return train_size;
    case Split::kVal:
      return val_size;
    case Split::kTest:
      break;
  }
  return test_size;
}

std::string DatasetMeta::ToJson() const {
  nlohmann::ordered_json j;
  j["format"] = kDatasetFormatName;
  j["version"] = kDatasetFormatVersion;
  if (minor_version > 0) j["minor_version"] = minor_version;
  j["num_nodes"] = num_nodes;
  j["num_edges"] = num_edges;
  j["feature_dim"] = feature_dim;
  j["feature_dtype"] = FeatureDtypeName(feature_dtype);
  j["row_stride_bytes"] = row_stride_bytes;
  if (sparse_features) {
    j["feature_format"] = "csr";
    j["feature_nnz"] = feature_nnz;
  }
  j["num_classes"] = num_classes;
  j["node_id_bytes"] = node_id_bytes;
  j["block_size"] = block_size;
  j["split_sizes"] = {{"train", train_size}, {"val", val_size}, {"test", test_size}};
  j["in_degree"] = {{"min", in_degree.min},
                    {"max", in_degree.max},
                    {"mean", in_degree.mean},
                    {"zero_count", in_degree.zero_count}};
  nlohmann::ordered_json files_json = nlohmann::ordered_json::object();
  for (const auto& [name, digest] : files) {
    files_json[name] = {{"bytes", digest.bytes}, {"xxh64", fmt::format("{:016x}", digest.xxh64)}};
  }
  j["files"] = files_json;
  if (partition) {
    const PartitionMeta& p = *partition;
    j["partition"] = {{"method", p.method},
                      {"parts", p.parts},
                      {"hubs", p.hubs},
                      {"edge_cut_ratio", p.edge_cut_ratio},
                      {"label_balance", p.label_balance},
                      {"max_part_nodes", p.max_part_nodes},
                      {"min_part_nodes", p.min_part_nodes},
                      {"seconds", p.seconds},
                      {"peak_rss_bytes", p.peak_rss_bytes},
                      {"partitioner_seconds", p.partitioner_seconds},
                      {"partitioner_peak_rss_bytes", p.partitioner_peak_rss_bytes},
                      {"source", p.source}};
  }
  return j.dump(2) + "\n";
}

DatasetMeta DatasetMeta::FromJson(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error::Input(fmt::format("meta.json is not valid JSON: {}", e.what()), source);
  }
  DatasetMeta meta;
  try {
    if (j.at("format").get<std::string>() != kDatasetFormatName) {
      throw Error::Input("not a Strata dataset: format is not 'strata-dataset'", source);
    }
    int version = IntegerField<int>(j, "version", source);
    if (version != kDatasetFormatVersion) {
      throw Error::Input(fmt::format("dataset format version {} is not supported (this build "
                                     "reads version {})",
                                     version, kDatasetFormatVersion),
                         source);
    }
    meta.num_nodes = IntegerField<uint64_t>(j, "num_nodes", source);
    meta.num_edges = IntegerField<uint64_t>(j, "num_edges", source);
    meta.feature_dim = IntegerField<uint64_t>(j, "feature_dim", source);
    meta.feature_dtype = ParseFeatureDtype(j.at("feature_dtype").get<std::string>(), source);
    meta.row_stride_bytes = IntegerField<uint64_t>(j, "row_stride_bytes", source);
    meta.num_classes = IntegerField<uint32_t>(j, "num_classes", source);
    meta.node_id_bytes = IntegerField<uint32_t>(j, "node_id_bytes", source);
    meta.block_size = IntegerField<uint32_t>(j, "block_size", source);
    const auto& splits = j.at("split_sizes");
    meta.train_size = IntegerField<uint64_t>(splits, "train", source);
    meta.val_size = IntegerField<uint64_t>(splits, "val", source);
    meta.test_size = IntegerField<uint64_t>(splits, "test", source);
    if (j.contains("in_degree")) {
      const auto& d = j.at("in_degree");
      meta.in_degree = {IntegerField<uint64_t>(d, "min", source),
                        IntegerField<uint64_t>(d, "max", source), d.at("mean").get<double>(),
                        IntegerField<uint64_t>(d, "zero_count", source)};
    }
    meta.minor_version = IntegerField<int>(j, "minor_version", 0, source);
    const std::string feature_format = j.value("feature_format", std::string("dense"));
    if (feature_format != "dense" && feature_format != "csr") {
      throw Error::Input(
          fmt::format("feature_format '{}' is neither dense nor csr", feature_format), source);
    }
    meta.sparse_features = feature_format == "csr";
    meta.feature_nnz = IntegerField<uint64_t>(j, "feature_nnz", 0, source);
    if (j.contains("partition")) {
      const auto& p = j.at("partition");
      PartitionMeta partition;
      partition.method = p.at("method").get<std::string>();
      partition.parts = IntegerField<uint32_t>(p, "parts", source);
      partition.hubs = IntegerField<uint64_t>(p, "hubs", source);
      partition.edge_cut_ratio = p.at("edge_cut_ratio").get<double>();
      partition.label_balance = p.at("label_balance").get<double>();
      partition.max_part_nodes = IntegerField<uint64_t>(p, "max_part_nodes", 0, source);
      partition.min_part_nodes = IntegerField<uint64_t>(p, "min_part_nodes", 0, source);
      partition.seconds = p.value("seconds", 0.0);
      partition.peak_rss_bytes = IntegerField<uint64_t>(p, "peak_rss_bytes", 0, source);
      partition.partitioner_seconds = p.value("partitioner_seconds", 0.0);
      partition.partitioner_peak_rss_bytes =
          IntegerField<uint64_t>(p, "partitioner_peak_rss_bytes", 0, source);
      partition.source = p.value("source", std::string());
      meta.partition = partition;
    }
    for (const auto& [name, entry] : j.at("files").items()) {
      FileDigest digest;
      digest.bytes = IntegerField<uint64_t>(entry, "bytes", source);
      digest.xxh64 = ParseXxh64(entry.at("xxh64").get<std::string>(), source);
      meta.files[name] = digest;
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error::Input(
        fmt::format("meta.json is missing a field or has a wrong type: {}", e.what()), source);
  }
  if (meta.node_id_bytes != 4 && meta.node_id_bytes != 8) {
    throw Error::Input(fmt::format("node_id_bytes is {}, expected 4 or 8", meta.node_id_bytes),
                       source);
  }
  if (meta.row_stride_bytes != RowStrideBytes(meta.feature_dim, meta.feature_dtype)) {
    throw Error::Input(
        fmt::format("row_stride_bytes {} does not match feature_dim {} of {}",
                    meta.row_stride_bytes, meta.feature_dim, FeatureDtypeName(meta.feature_dtype)),
        source);
  }
  return meta;
}

Dataset Dataset::Open(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error::Input("dataset directory does not exist", dir);
  }
  Dataset dataset(dir, DatasetMeta{});
  const std::string meta_path = dataset.PathOf(kMetaFile);
  DatasetMeta& meta = dataset.meta_;
  meta = DatasetMeta::FromJson(ReadWholeFile(meta_path), meta_path);
  auto expect = [&](std::string_view name, uint64_t bytes) {
    auto it = meta.files.find(std::string(name));
    if (it == meta.files.end()) {
      throw Error::Input(fmt::format("meta.json does not list {}", name), meta_path);
    }
    if (it->second.bytes < bytes) {
      throw Error::Input(fmt::format("meta.json records {} bytes for {}, the format needs {}",
                                     it->second.bytes, name, bytes),
                         meta_path);
    }
  };
  expect(kIndptrFile, (meta.num_nodes + 1) * 8);
  expect(kIndicesFile, meta.num_edges * meta.node_id_bytes);
  if (meta.sparse_features) {
    expect(kSparseIndptrFile, (meta.num_nodes + 1) * 8);
    expect(kSparseIndicesFile, meta.feature_nnz * 4);
    expect(kSparseValuesFile, meta.feature_nnz * 4);
  } else {
    expect(kFeaturesFile, meta.num_nodes * meta.row_stride_bytes);
  }
  expect(kLabelsFile, meta.num_nodes * 4);
  for (Split split : kAllSplits) {
    expect(SplitFile(split), meta.split_size(split) * meta.node_id_bytes);
  }
  if (meta.partition) {
    expect(kPartitionOffsetsFile, (uint64_t{meta.partition->parts} + 1) * 8);
    expect(kPartitionOriginalIdsFile, meta.num_nodes * meta.node_id_bytes);
    expect(kHubIdsFile, meta.partition->hubs * meta.node_id_bytes);
    expect(kHubIndptrFile, (meta.partition->hubs + 1) * 8);
    expect(kHubIndicesFile, 0);
    expect(kHubFeaturesFile, meta.partition->hubs * meta.row_stride_bytes);
  }
  for (const auto& [name, digest] : meta.files) {
    const std::string path = dataset.PathOf(name);
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) throw Error::Input("file listed in meta.json is missing", path);
    if (size != digest.bytes) {
      throw Error::Input(fmt::format("size is {} bytes, meta.json records {}", size, digest.bytes),
                         path);
    }
  }
  return dataset;
}

std::string Dataset::PathOf(std::string_view relative) const {
  return fmt::format("{}/{}", dir_, relative);
}

std::vector<uint64_t> Dataset::ReadSplit(Split split) const {
  const std::string path = PathOf(SplitFile(split));
  const std::string bytes = ReadWholeFile(path);
  const uint32_t width = meta_.node_id_bytes;
  std::vector<uint64_t> ids(bytes.size() / width);
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t id =
        LoadNodeId(reinterpret_cast<const std::byte*>(bytes.data()) + i * width, width);
    if (id >= meta_.num_nodes) {
      throw Error::Input(fmt::format("node id {} is >= num_nodes {}", id, meta_.num_nodes), path,
                         fmt::format("element [{}]", i));
    }
    ids[i] = id;
  }
  return ids;
}

ChargedArray<int32_t> Dataset::ReadLabels(MemoryBudget& budget) const {
  ChargedArray<int32_t> labels(budget, meta_.num_nodes, "labels");
  const std::string path = PathOf(kLabelsFile);
  FileReader(path).ReadExact(0, labels.data(), meta_.num_nodes * sizeof(int32_t));
  // The losses and accuracies index by them.
  CheckStoredLabels(labels.data(), meta_.num_nodes, 0, meta_.num_classes, path);
  return labels;
}

void Dataset::Verify(MemoryBudget& budget) const {
  for (const auto& [name, expected] : meta_.files) {
    const std::string path = PathOf(name);
    FileDigest actual = DigestFile(path);
    if (actual.bytes != expected.bytes) {
      throw Error::Input(
          fmt::format("size is {} bytes, meta.json records {}", actual.bytes, expected.bytes),
          path);
    }
    if (actual.xxh64 != expected.xxh64) {
      throw Error::Input(fmt::format("checksum mismatch: xxh64 is {:016x}, meta.json records "
                                     "{:016x}",
                                     actual.xxh64, expected.xxh64),
                         path);
    }
  }
  CheckDatasetContents(*this, budget);
}

}  // namespace strata
