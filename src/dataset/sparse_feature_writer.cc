#include "dataset/sparse_feature_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "strata/error.h"

namespace strata {
namespace {

std::string InDirectoryOf(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  return path;
}

}  // namespace

SparseFeatureWriter::SparseFeatureWriter(const std::string& indptr_path,
                                         const std::string& indices_path,
                                         const std::string& values_path, std::string source)
    : indptr_(InDirectoryOf(indptr_path)),
      indices_(indices_path),
      values_(values_path),
      source_(std::move(source)) {
  indptr_.Append(&nnz_, sizeof(nnz_));
}

void SparseFeatureWriter::AppendRow(std::span<const uint32_t> columns,
                                    std::span<const float> values) {
  if (columns.size() != values.size()) {
    throw Error::Internal("SparseFeatureWriter: a row with more columns than values");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw Error::Input(fmt::format("feature value {} is not finite", values[i]), source_,
                         fmt::format("row {}, column {}", rows_, columns[i]));
    }
  }
  indices_.Append(columns.data(), columns.size_bytes());
  values_.Append(values.data(), values.size_bytes());
  nnz_ += columns.size();
  ++rows_;
  indptr_.Append(&nnz_, sizeof(nnz_));
}

SparseFeatureDigests SparseFeatureWriter::Finish() {
  return {indptr_.Finish(), indices_.Finish(), values_.Finish()};
}

}  // namespace strata
