#include "dataset/npz_features.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "common/interrupt.h"
#include "dataset/build_common.h"
#include "dataset/sparse_feature_writer.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

// Column ids are stored as uint32.
constexpr uint64_t kMaxCols = uint64_t{1} << 32;

const ZipMember& FindMember(const ZipArchive& archive, const std::string& name) {
  const ZipMember* member = archive.Find(name);
  if (member == nullptr) {
    throw Error::Input(fmt::format("no member {}: expected a matrix saved by "
                                   "scipy.sparse.save_npz (indptr, indices, data, format, shape)",
                                   name),
                       archive.path());
  }
  return *member;
}

// Extracts `name` into the scratch directory and opens it, named "ARCHIVE:name" in errors.
NpyReader ExtractArray(const ZipArchive& archive, const std::string& name,
                       const std::string& scratch_dir) {
  return ExtractNpyMember(archive, FindMember(archive, name), scratch_dir + "/npz-" + name);
}

bool ReadIsCsc(const ZipArchive& archive, const std::string& scratch_dir) {
  const std::string out = scratch_dir + "/npz-format.npy";
  archive.Extract(FindMember(archive, "format.npy"), out);
  const std::string format = ReadNpyString(out, archive.path() + ":format.npy");
  if (format != "csr" && format != "csc") {
    throw Error::Input(fmt::format("the matrix format is '{}'; only 'csr' and 'csc' can be "
                                   "imported (save x.tocsr())",
                                   format),
                       archive.path(), "format.npy");
  }
  return format == "csc";
}

std::array<uint64_t, 2> ReadNpzMatrixShape(const ZipArchive& archive,
                                           const std::string& scratch_dir) {
  NpyReader shape = ExtractArray(archive, "shape.npy", scratch_dir);
  if (shape.ndim() != 1 || shape.num_elements() != 2 || !NpyIsInteger(shape.dtype())) {
    throw Error::Input(fmt::format("shape must hold two integers, found {} of shape {}",
                                   NpyDtypeName(shape.dtype()), NpyShapeString(shape.shape())),
                       shape.path());
  }
  int64_t dims[2];
  shape.ReadInt64(0, dims);
  if (dims[0] < 0 || dims[1] < 0) {
    throw Error::Input(fmt::format("shape ({}, {}) is negative", dims[0], dims[1]), shape.path());
  }
  // Rows are nodes: bounded as every other source of node ids is, which also keeps the sizes
  // computed from them (offsets, a CSC transpose) far from overflowing.
  if (static_cast<uint64_t>(dims[0]) > kMaxNodeIds) {
    throw Error::Input(
        fmt::format("{} rows are more than the 2^48 nodes a dataset can hold", dims[0]),
        shape.path());
  }
  if (static_cast<uint64_t>(dims[1]) > kMaxCols) {
    throw Error::Input(fmt::format("{} columns are more than the 2^32 that sparse features "
                                   "can store",
                                   dims[1]),
                       shape.path());
  }
  return {static_cast<uint64_t>(dims[0]), static_cast<uint64_t>(dims[1])};
}

void CheckOneDimensional(const NpyReader& array, bool integer) {
  if (array.ndim() != 1 || (integer && !NpyIsInteger(array.dtype()))) {
    throw Error::Input(
        fmt::format("expected a 1-D {}array, found {} of shape {}", integer ? "integer " : "",
                    NpyDtypeName(array.dtype()), NpyShapeString(array.shape())),
        array.path());
  }
}

// Reads elements [first, first + out.size()) of data, whatever its numeric dtype, as float32;
// `scratch` holds integer values on the way.
void ReadValues(const NpyReader& data, uint64_t first, std::span<float> out,
                std::span<int64_t> scratch) {
  if (NpyIsFloat(data.dtype())) return data.ReadFloat32(first, out);
  data.ReadInt64(first, scratch.first(out.size()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(scratch[i]);
}

// Sums the values of equal adjacent columns into the first of them; returns the new length.
size_t SumAdjacentRepeats(std::span<uint32_t> columns, std::span<float> values) {
  size_t kept = 0;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (kept > 0 && columns[kept - 1] == columns[i]) {
      values[kept - 1] += values[i];
    } else {
      columns[kept] = columns[i];
      values[kept] = values[i];
      ++kept;
    }
  }
  return kept;
}

// Reads an integer array through a window of kImportChunkElements values, refilled from i when
// At(i) falls outside it: cheap for indices that mostly ascend.
class ForwardReader {
 public:
  ForwardReader(const NpyReader& array, MemoryBudget& budget)
      : array_(array), buffer_(budget, kImportChunkElements, "the .npz import buffer") {}

  int64_t At(uint64_t i) {
    if (i < first_ || i >= first_ + count_) {
      first_ = i;
      count_ = std::min<uint64_t>(kImportChunkElements, array_.num_elements() - i);
      array_.ReadInt64(first_, {buffer_.data(), count_});
    }
    return buffer_[i - first_];
  }

 private:
  const NpyReader& array_;
  ChargedArray<int64_t> buffer_;
  uint64_t first_ = 0, count_ = 0;
};

}  // namespace

NpzFeatures::NpzFeatures(const std::string& path, const std::string& scratch_dir)
    : NpzFeatures(path, ZipArchive(path), scratch_dir) {}

NpzFeatures::NpzFeatures(const std::string& path, const ZipArchive& archive,
                         const std::string& scratch_dir)
    : path_(path),
      csc_(ReadIsCsc(archive, scratch_dir)),
      shape_(ReadNpzMatrixShape(archive, scratch_dir)),
      indptr_(ExtractArray(archive, "indptr.npy", scratch_dir)),
      indices_(ExtractArray(archive, "indices.npy", scratch_dir)),
      data_(ExtractArray(archive, "data.npy", scratch_dir)) {
  CheckOneDimensional(indptr_, /*integer=*/true);
  CheckOneDimensional(indices_, /*integer=*/true);
  CheckOneDimensional(data_, /*integer=*/false);
  const uint64_t major = csc_ ? cols() : rows();
  if (indptr_.num_elements() != major + 1) {
    throw Error::Input(
        fmt::format("indptr has {} elements; a {} matrix of shape ({}, {}) needs "
                    "{} + 1",
                    indptr_.num_elements(), csc_ ? "CSC" : "CSR", rows(), cols(), major),
        indptr_.path());
  }
  if (data_.num_elements() != indices_.num_elements()) {
    throw Error::Input(fmt::format("data has {} elements and indices {}; they must be equal",
                                   data_.num_elements(), indices_.num_elements()),
                       data_.path());
  }
}

void NpzFeatures::CheckIndptr(MemoryBudget& budget) const {
  ForwardReader indptr(indptr_, budget);
  const uint64_t last = indptr_.num_elements() - 1;
  auto error = [&](uint64_t i, const std::string& what) {
    return Error::Input(what, path_, fmt::format("indptr.npy element [{}]", i));
  };
  if (indptr.At(0) != 0) throw error(0, fmt::format("indptr starts at {}, not 0", indptr.At(0)));
  for (uint64_t i = 1; i <= last; ++i) {
    const int64_t previous = indptr.At(i - 1), value = indptr.At(i);
    if (value < previous) {
      throw error(i, fmt::format("indptr decreases from {} to {}", previous, value));
    }
    if (static_cast<uint64_t>(value) > stored_values()) {
      throw error(i, fmt::format("indptr {} is past the {} stored values", value, stored_values()));
    }
    if (i % kImportChunkElements == 0) ThrowIfInterrupted();
  }
  if (static_cast<uint64_t>(indptr.At(last)) != stored_values()) {
    throw error(last, fmt::format("indptr ends at {}, but indices and data hold {} values",
                                  indptr.At(last), stored_values()));
  }
}

void NpzFeatures::Import(MemoryBudget& budget, DatasetWriter& writer) const {
  CheckIndptr(budget);
  SparseFeatureWriter out(writer.PathOf(kSparseIndptrFile), writer.PathOf(kSparseIndicesFile),
                          writer.PathOf(kSparseValuesFile), path_);
  if (csc_) {
    WriteCsc(budget, out);
  } else {
    WriteCsr(budget, out);
  }
  const uint64_t nnz = out.nnz();
  const SparseFeatureDigests digests = out.Finish();
  writer.Record(kSparseIndptrFile, digests.indptr);
  writer.Record(kSparseIndicesFile, digests.indices);
  writer.Record(kSparseValuesFile, digests.values);
  DatasetMeta& meta = writer.meta();
  meta.sparse_features = true;
  meta.feature_nnz = nnz;
  meta.minor_version = std::max(meta.minor_version, 2);
  meta.feature_dim = cols();
  meta.feature_dtype = FeatureDtype::kFloat32;
  meta.row_stride_bytes = RowStrideBytes(cols(), FeatureDtype::kFloat32);
}

// Rows are read in batches of up to kImportChunkElements values (or one longer row), and each row's
// columns checked, sorted when they are not, and repeats summed.
void NpzFeatures::WriteCsr(MemoryBudget& budget, SparseFeatureWriter& out) const {
  ForwardReader indptr(indptr_, budget);
  TrackedCharge charge(budget, "the .npz import buffer");
  std::vector<int64_t> raw;
  std::vector<uint32_t> columns;
  std::vector<float> values;
  std::vector<std::pair<uint32_t, float>> sorted;
  for (uint64_t row = 0; row < rows();) {
    const uint64_t begin = static_cast<uint64_t>(indptr.At(row));
    uint64_t end_row = row + 1;
    while (end_row < rows() &&
           static_cast<uint64_t>(indptr.At(end_row + 1)) - begin <= kImportChunkElements) {
      ++end_row;
    }
    const uint64_t count = static_cast<uint64_t>(indptr.At(end_row)) - begin;
    // int64 ids and scratch, uint32 columns, float values, and (column, value) pairs.
    charge.Update(std::max(charge.bytes(), count * (8 + 4 + 4 + 8)));
    raw.resize(count);
    columns.resize(count);
    values.resize(count);
    indices_.ReadInt64(begin, raw);
    for (uint64_t i = 0; i < count; ++i) {
      if (raw[i] < 0 || static_cast<uint64_t>(raw[i]) >= cols()) {
        uint64_t r = row;
        while (static_cast<uint64_t>(indptr.At(r + 1)) <= begin + i) ++r;
        throw Error::Input(fmt::format("column {} in row {} is outside the matrix's {} columns",
                                       raw[i], r, cols()),
                           path_, fmt::format("indices.npy element [{}]", begin + i));
      }
      columns[i] = static_cast<uint32_t>(raw[i]);
    }
    ReadValues(data_, begin, values, raw);
    for (; row < end_row; ++row) {
      const uint64_t first = static_cast<uint64_t>(indptr.At(row)) - begin;
      const uint64_t length = static_cast<uint64_t>(indptr.At(row + 1)) - begin - first;
      std::span<uint32_t> row_columns(columns.data() + first, length);
      std::span<float> row_values(values.data() + first, length);
      if (!std::is_sorted(row_columns.begin(), row_columns.end())) {
        sorted.clear();
        for (uint64_t i = 0; i < length; ++i) sorted.emplace_back(row_columns[i], row_values[i]);
        // Stable, so that repeats are summed in the order they are stored.
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (uint64_t i = 0; i < length; ++i) {
          row_columns[i] = sorted[i].first;
          row_values[i] = sorted[i].second;
        }
      }
      const size_t kept = SumAdjacentRepeats(row_columns, row_values);
      out.AppendRow(row_columns.first(kept), row_values.first(kept));
    }
    ThrowIfInterrupted();
  }
}

// A counting sort by row: count each row's values, then place every value in column order, so
// that each row's columns come out ascending with repeats adjacent.
void NpzFeatures::WriteCsc(MemoryBudget& budget, SparseFeatureWriter& out) const {
  const uint64_t nnz = stored_values();
  const uint64_t needed =
      (rows() + 1) * sizeof(uint64_t) + nnz * (sizeof(uint32_t) + sizeof(float));
  // The chunk buffers below are charged too: indptr and indices as int64, values as float.
  const uint64_t buffers = kImportChunkElements * (2 * sizeof(int64_t) + sizeof(float));
  if (needed + buffers > budget.available()) {
    throw Error::Input(fmt::format("transposing this CSC matrix to rows needs {} of memory, the "
                                   "budget has {} free; raise --memory-budget, or save the "
                                   "matrix as CSR (x.tocsr()) to stream it",
                                   FormatBytes(needed + buffers), FormatBytes(budget.available())),
                       path_);
  }
  ChargedArray<uint64_t> offsets(budget, rows() + 1, "transposing the CSC features");
  ChargedArray<uint32_t> columns(budget, nnz, "transposing the CSC features");
  ChargedArray<float> values(budget, nnz, "transposing the CSC features");
  ChargedArray<int64_t> raw(budget, kImportChunkElements, "the .npz import buffer");
  ChargedArray<float> chunk_values(budget, kImportChunkElements, "the .npz import buffer");

  std::fill(offsets.data(), offsets.data() + rows() + 1, 0);
  for (uint64_t first = 0; first < nnz; first += kImportChunkElements) {
    const uint64_t count = std::min(kImportChunkElements, nnz - first);
    indices_.ReadInt64(first, {raw.data(), count});
    for (uint64_t i = 0; i < count; ++i) {
      if (raw[i] < 0 || static_cast<uint64_t>(raw[i]) >= rows()) {
        throw Error::Input(fmt::format("row {} is outside the matrix's {} rows", raw[i], rows()),
                           path_, fmt::format("indices.npy element [{}]", first + i));
      }
      ++offsets[static_cast<uint64_t>(raw[i]) + 1];
    }
    ThrowIfInterrupted();
  }
  for (uint64_t r = 0; r < rows(); ++r) offsets[r + 1] += offsets[r];

  // offsets[r] serves as row r's next free slot, and ends as row r + 1's start.
  ForwardReader indptr(indptr_, budget);
  uint64_t column = 0;
  for (uint64_t first = 0; first < nnz; first += kImportChunkElements) {
    const uint64_t count = std::min(kImportChunkElements, nnz - first);
    ReadValues(data_, first, {chunk_values.data(), count}, {raw.data(), count});
    indices_.ReadInt64(first, {raw.data(), count});
    for (uint64_t i = 0; i < count; ++i) {
      while (static_cast<uint64_t>(indptr.At(column + 1)) <= first + i) ++column;
      const uint64_t slot = offsets[static_cast<uint64_t>(raw[i])]++;
      columns[slot] = static_cast<uint32_t>(column);
      values[slot] = chunk_values[i];
    }
    ThrowIfInterrupted();
  }
  for (uint64_t r = 0, begin = 0; r < rows(); ++r) {
    const uint64_t end = offsets[r];
    const size_t kept = SumAdjacentRepeats({columns.data() + begin, end - begin},
                                           {values.data() + begin, end - begin});
    out.AppendRow({columns.data() + begin, kept}, {values.data() + begin, kept});
    begin = end;
  }
}

}  // namespace strata
