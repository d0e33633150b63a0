// SparseFeatureWriter streams CSR feature rows, in node order, into features/indptr.bin
// (uint64[N + 1]), features/indices.bin (uint32 column of each stored value, ascending within
// a row) and features/values.bin (float32): the sparse alternative to features.bin (format
// minor version 2, docs/format.md).
//
// Invariant: rows() rows and nnz() values have been written, every value finite (a NaN or
// infinity is an input error naming the source); indptr holds rows() + 1 offsets.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "storage/file.h"

namespace strata {

struct SparseFeatureDigests {
  FileDigest indptr, indices, values;
};

class SparseFeatureWriter {
 public:
  // Creates the files' directory if needed. `source`: what the rows are read from, for errors.
  SparseFeatureWriter(const std::string& indptr_path, const std::string& indices_path,
                      const std::string& values_path, std::string source);

  // Appends one row: `columns` ascending and below the feature dimension, one value each.
  void AppendRow(std::span<const uint32_t> columns, std::span<const float> values);

  uint64_t rows() const { return rows_; }
  uint64_t nnz() const { return nnz_; }
  SparseFeatureDigests Finish();

 private:
  FileWriter indptr_, indices_, values_;
  std::string source_;
  uint64_t rows_ = 0;
  uint64_t nnz_ = 0;
};

}  // namespace strata
