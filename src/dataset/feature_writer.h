// FeatureWriter streams feature rows, in node order, into features.bin: each row converted to
// the stored dtype and zero-padded to row_stride_bytes, and the file padded to a whole block
// so that direct I/O can read its last row.
//
// Invariant: rows() rows have been written, each exactly row_stride_bytes long.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/file.h"
#include "strata/dataset.h"

namespace strata {

class FeatureWriter {
 public:
  FeatureWriter(const std::string& path, uint64_t feature_dim, FeatureDtype dtype);

  // Appends rows.size() / feature_dim rows given as float32, row-major.
  void AppendRows(std::span<const float> rows);
  // Appends whole rows already in the stored form (row_stride_bytes each), as another
  // features.bin of the same dim and dtype holds them.
  void AppendStoredRows(std::span<const std::byte> rows);

  uint64_t rows() const { return rows_; }
  FileDigest Finish();

 private:
  FileWriter file_;
  uint64_t feature_dim_;
  FeatureDtype dtype_;
  uint64_t stride_;
  std::vector<std::byte> row_;
  uint64_t rows_ = 0;
};

}  // namespace strata
