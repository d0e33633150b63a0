// FeatureWriter streams feature rows, in node order, into features.bin: each row converted to
// the stored dtype and zero-padded to row_stride_bytes, and the file padded to a whole block
// so that direct I/O can read its last row.
//
// Invariant: rows() rows have been written, each exactly row_stride_bytes long, every value
// finite (CheckFeatureValues).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/file.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata {

// Refuses, in an input error naming `source` and the row and column, a value of `values` (rows
// first_row, first_row + 1, ... of `dim` values each) that is NaN or infinite, or that float16
// cannot hold when `dtype` is float16 (beyond ±65504, which would be stored as infinity): either
// would train to a loss of NaN.
void CheckFeatureValues(std::span<const float> values, uint64_t dim, uint64_t first_row,
                        FeatureDtype dtype, const std::string& source);

class FeatureWriter {
 public:
  // `source`: what the rows are read from, for the errors of CheckFeatureValues. The one row
  // of stored bytes the writer converts into is charged to `budget`.
  FeatureWriter(const std::string& path, uint64_t feature_dim, FeatureDtype dtype,
                std::string source, MemoryBudget& budget);

  // Refuses, before anything is written, `rows` rows that the file system has no room for.
  void ExpectRows(uint64_t rows) const;

  // Appends rows.size() / feature_dim rows given as float32, row-major, after
  // CheckFeatureValues.
  void AppendRows(std::span<const float> rows);
  // Appends whole rows already in the stored form (row_stride_bytes each), as another
  // features.bin of the same dim and dtype holds them.
  void AppendStoredRows(std::span<const std::byte> rows);

  uint64_t rows() const { return rows_; }
  FileDigest Finish();

 private:
  FileWriter file_;
  std::string source_;
  uint64_t feature_dim_;
  FeatureDtype dtype_;
  uint64_t stride_;
  ChargedArray<std::byte> row_;
  uint64_t rows_ = 0;
};

}  // namespace strata
