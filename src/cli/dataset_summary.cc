#include "cli/dataset_summary.h"

#include <fmt/format.h>

#include <cstdio>

#include "strata/memory_budget.h"

namespace strata::cli {
namespace {

// 12345678 -> "12,345,678".
std::string Grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

uint64_t TotalBytes(const DatasetMeta& meta) {
  uint64_t total = 0;
  for (const auto& [name, digest] : meta.files) total += digest.bytes;
  return total;
}

}  // namespace

void PrintWritten(const std::string& out, const DatasetMeta& meta,
                  std::chrono::steady_clock::time_point start) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "wrote %s: %s nodes, %s edges, %s x %s features, %u classes, %s on disk in %.1f s "
      "(%.2f M edges/s, peak RSS %s)\n",
      out.c_str(), Grouped(meta.num_nodes).c_str(), Grouped(meta.num_edges).c_str(),
      Grouped(meta.feature_dim).c_str(), std::string(FeatureDtypeName(meta.feature_dtype)).c_str(),
      meta.num_classes, FormatBytes(TotalBytes(meta)).c_str(), seconds,
      meta.num_edges / seconds / 1e6, FormatBytes(PeakRssBytes()).c_str());
}

nlohmann::ordered_json DatasetInfoJson(const Dataset& dataset) {
  const DatasetMeta& meta = dataset.meta();
  nlohmann::ordered_json j;
  j["path"] = dataset.dir();
  j["format"] = kDatasetFormatName;
  j["version"] = kDatasetFormatVersion;
  j["num_nodes"] = meta.num_nodes;
  j["num_edges"] = meta.num_edges;
  j["feature_dim"] = meta.feature_dim;
  j["feature_dtype"] = FeatureDtypeName(meta.feature_dtype);
  j["row_stride_bytes"] = meta.row_stride_bytes;
  j["num_classes"] = meta.num_classes;
  j["node_id_bytes"] = meta.node_id_bytes;
  j["split_sizes"] = {{"train", meta.train_size}, {"val", meta.val_size}, {"test", meta.test_size}};
  j["in_degree"] = {{"min", meta.in_degree.min},
                    {"max", meta.in_degree.max},
                    {"mean", meta.in_degree.mean},
                    {"zero_count", meta.in_degree.zero_count}};
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  for (const auto& [name, digest] : meta.files) {
    files[name] = {{"bytes", digest.bytes}, {"xxh64", fmt::format("{:016x}", digest.xxh64)}};
  }
  j["files"] = files;
  j["total_bytes"] = TotalBytes(meta);
  return j;
}

std::string DatasetInfoText(const Dataset& dataset) {
  const DatasetMeta& meta = dataset.meta();
  std::string text;
  auto line = [&](const char* key, const std::string& value) {
    text += fmt::format("{:<12} {}\n", key, value);
  };
  line("dataset",
       fmt::format("{} ({} v{})", dataset.dir(), kDatasetFormatName, kDatasetFormatVersion));
  line("nodes", fmt::format("{} ({}-byte ids)", Grouped(meta.num_nodes), meta.node_id_bytes));
  line("edges", Grouped(meta.num_edges));
  std::string features = "none";
  if (meta.sparse_features) {
    features =
        fmt::format("{} x {}, sparse (CSR), {} stored values ({:.2f} per row)", meta.feature_dim,
                    FeatureDtypeName(meta.feature_dtype), Grouped(meta.feature_nnz),
                    static_cast<double>(meta.feature_nnz) / std::max<uint64_t>(meta.num_nodes, 1));
  } else if (meta.feature_dim > 0) {
    features = fmt::format("{} x {}, row stride {} B", meta.feature_dim,
                           FeatureDtypeName(meta.feature_dtype), meta.row_stride_bytes);
  }
  line("features", features);
  line("classes", std::to_string(meta.num_classes));
  line("splits", fmt::format("train {} / val {} / test {}", Grouped(meta.train_size),
                             Grouped(meta.val_size), Grouped(meta.test_size)));
  line("in-degree", fmt::format("min {}, mean {:.2f}, max {}; {} nodes without in-neighbours",
                                Grouped(meta.in_degree.min), meta.in_degree.mean,
                                Grouped(meta.in_degree.max), Grouped(meta.in_degree.zero_count)));
  line("on disk", FormatBytes(TotalBytes(meta)));
  for (const auto& [name, digest] : meta.files) {
    text += fmt::format("  {:<20} {:>12}  xxh64 {:016x}\n", name, FormatBytes(digest.bytes),
                        digest.xxh64);
  }
  return text;
}

}  // namespace strata::cli
