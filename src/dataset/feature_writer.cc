#include "dataset/feature_writer.h"

#include <cstring>

#include "common/float16.h"
#include "strata/error.h"

namespace strata {

FeatureWriter::FeatureWriter(const std::string& path, uint64_t feature_dim, FeatureDtype dtype)
    : file_(path),
      feature_dim_(feature_dim),
      dtype_(dtype),
      stride_(RowStrideBytes(feature_dim, dtype)),
      row_(stride_) {}

void FeatureWriter::AppendRows(std::span<const float> rows) {
  if (feature_dim_ == 0) return;
  if (rows.size() % feature_dim_ != 0) throw Error::Internal("FeatureWriter: partial row");
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
