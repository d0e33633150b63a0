#include "dataset/feature_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/float16.h"
#include "strata/error.h"

namespace strata {

void CheckFeatureValues(std::span<const float> values, uint64_t dim, uint64_t first_row,
                        FeatureDtype dtype, const std::string& source) {
  // float16 rounds values below 65520 to at most 65504; NaN fails every comparison.
  const float limit =
      dtype == FeatureDtype::kFloat16 ? 65520.0f : std::numeric_limits<float>::infinity();
  bool all_held = true;
  for (float v : values) all_held &= std::abs(v) < limit;
  if (all_held) return;
  for (uint64_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    const std::string where = fmt::format("row {}, column {}", first_row + i / dim, i % dim);
    if (!std::isfinite(v)) {
      throw Error::Input(fmt::format("feature value {} is not finite", v), source, where);
    }
    if (std::abs(v) >= limit) {
      throw Error::Input(fmt::format("feature value {} is beyond float16's range (±65504); "
                                     "store float32 (--feature-dtype float32)",
                                     v),
                         source, where);
    }
  }
}

FeatureWriter::FeatureWriter(const std::string& path, uint64_t feature_dim, FeatureDtype dtype,
                             std::string source, MemoryBudget& budget)
    : file_(path),
      source_(std::move(source)),
      feature_dim_(feature_dim),
      dtype_(dtype),
      stride_(RowStrideBytes(feature_dim, dtype)),
      row_(budget, stride_, "a feature row") {
  std::fill_n(row_.data(), row_.size(), std::byte{0});  // the padding past the values
}

void FeatureWriter::ExpectRows(uint64_t rows) const {
  CheckFreeSpace(ParentDirectory(file_.path()), rows * stride_,
                 fmt::format("features.bin of {} rows", rows));
}

void FeatureWriter::AppendRows(std::span<const float> rows) {
  if (feature_dim_ == 0) return;
  if (rows.size() % feature_dim_ != 0) throw Error::Internal("FeatureWriter: partial row");
  CheckFeatureValues(rows, feature_dim_, rows_, dtype_, source_);
  for (size_t start = 0; start < rows.size(); start += feature_dim_) {
    const float* in = rows.data() + start;
    if (dtype_ == FeatureDtype::kFloat32) {
      std::memcpy(row_.data(), in, feature_dim_ * sizeof(float));
    } else {
      FloatsToHalves({in, feature_dim_}, reinterpret_cast<uint16_t*>(row_.data()));
    }
    file_.Append(row_.data(), row_.size());
    ++rows_;
  }
}

void FeatureWriter::AppendStoredRows(std::span<const std::byte> rows) {
  if (feature_dim_ == 0) return;
  if (rows.size() % stride_ != 0) throw Error::Internal("FeatureWriter: partial stored row");
  file_.Append(rows.data(), rows.size());
  rows_ += rows.size() / stride_;
}

FileDigest FeatureWriter::Finish() {
  file_.PadTo(kBlockBytes);
  return file_.Finish();
}

}  // namespace strata
