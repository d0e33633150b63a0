// NpzFeatures is a SciPy sparse matrix saved by scipy.sparse.save_npz, opened to become a
// dataset's sparse CSR features (features/*.bin, format minor version 2): row i of the
// [rows, cols] matrix is node i's feature row. The archive holds format.npy ('csr' or 'csc', as
// bytes or text), shape.npy ([rows, cols]), indptr.npy, indices.npy and data.npy; other members
// (SciPy's _is_array) are ignored.
//
// Opening extracts those members into a scratch directory and checks everything their headers
// say (format, shapes, dtypes, lengths); Import checks every value while it writes, so that
// bad input is an input error naming the archive and member before anything is published.
// SciPy allows unsorted and repeated column indices within a row: the stored rows have their
// columns ascending and repeated columns summed (in float32, in the order they are stored).
//
// Memory: a CSR matrix is streamed, in buffers of a fixed number of values plus the longest
// row. A CSC matrix must be transposed, in memory charged to the budget: 8 bytes per stored
// value and per row; when that does not fit, Import refuses with the size it needs.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "dataset/dataset_writer.h"
#include "storage/zip_archive.h"
#include "strata/memory_budget.h"
#include "strata/npy.h"

namespace strata {

class SparseFeatureWriter;

class NpzFeatures {
 public:
  // Throws Error::Input naming `path` (and the member) unless it is such a matrix.
  NpzFeatures(const std::string& path, const std::string& scratch_dir);

  const std::string& path() const { return path_; }
  uint64_t rows() const { return shape_[0]; }
  uint64_t cols() const { return shape_[1]; }
  // Stored values, repeats included.
  uint64_t stored_values() const { return indices_.num_elements(); }

  // Writes features/{indptr,indices,values}.bin, records their digests and sets meta's
  // feature fields as `strata generate --feature-density` does.
  void Import(MemoryBudget& budget, DatasetWriter& writer) const;

 private:
  NpzFeatures(const std::string& path, const ZipArchive& archive, const std::string& scratch_dir);
  void WriteCsr(MemoryBudget& budget, SparseFeatureWriter& out) const;
  void WriteCsc(MemoryBudget& budget, SparseFeatureWriter& out) const;
  // Throws unless indptr[0] == 0, indptr never decreases and indptr[last] == stored_values().
  void CheckIndptr(MemoryBudget& budget) const;

  std::string path_;
  bool csc_;
  std::array<uint64_t, 2> shape_;  // rows, cols
  NpyReader indptr_, indices_, data_;
};

}  // namespace strata
