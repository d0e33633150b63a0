// ColumnSlices holds the matrix a full-graph propagation gathers from when N × its width does
// not fit in memory: as column slices of at most slice_width columns, each an N-row
// IntermediateRows on disk. A propagation then runs once per slice (column-sliced
// propagation, issue 29): the slice is loaded whole into an N × slice_width resident matrix,
// the adjacency streams past, and the slice's output rows overwrite the slice on disk; the
// slices are then read back together as full rows (the runner propagates the last slice
// straight into those rows instead, see BeginRead's first_slices). The memory floor is one resident
// slice, two chunk buffers per slice and one chunk of full rows, instead of N × width.
//
// A matrix of `width` columns has SliceCount(width) slices; slice s is its columns
// [s × slice_width, min(width, (s + 1) × slice_width)). Each output column depends only on the
// same input column, so slicing changes no value.
//
// Passes, each in row order and in pieces inside one chunk (as IntermediateRows'):
// - BeginWrite/Write/EndWrite: full rows, staged in the chunk buffer and split into the slices;
// - slice(s): one slice's own passes (load it, overwrite it);
// - BeginRead/Read/EndRead: full rows, assembled from every slice into the chunk buffer.
// Invariant: at most one of these passes is open at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fullgraph/intermediate_rows.h"
#include "nn/matrix.h"
#include "strata/memory_budget.h"

namespace strata {

class ColumnSlices {
 public:
  ColumnSlices() = default;
  // Slices of an rows × max_width matrix, slice_width columns each (the last may be narrower),
  // in scratch files in `scratch_dir`; `what` names it in budget and I/O errors.
  ColumnSlices(uint64_t rows, size_t max_width, size_t slice_width, uint64_t chunk_rows,
               const std::string& scratch_dir, MemoryBudget& budget, std::string_view what);

  // Bytes charged to the budget: each slice's chunk buffers and one chunk of full rows.
  static uint64_t ChargedBytes(uint64_t rows, size_t max_width, size_t slice_width,
                               uint64_t chunk_rows);

  size_t slice_width() const { return slice_width_; }
  size_t SliceCount(size_t width) const { return (width + slice_width_ - 1) / slice_width_; }
  // The first column of slice s, and its width, in a matrix of `width` columns.
  size_t FirstColumn(size_t s) const { return s * slice_width_; }
  size_t SliceWidth(size_t s, size_t width) const;
  IntermediateRows& slice(size_t s) { return slices_[s]; }
  // Slice s whole, into `rows` (rows × its width), and back: its own read and write passes.
  void Load(size_t s, MatrixSpan<float> rows);
  void Store(size_t s, MatrixSpan<const float> rows);

  // Full rows [begin, end) to fill, in order; they reach the slices at the next Write or at
  // EndWrite.
  void BeginWrite(size_t width);
  MatrixSpan<float> Write(uint64_t begin, uint64_t end);
  void EndWrite();

  // Full rows [begin, end), in order, assembled from the slices of the last write (through
  // Write or through each slice). The caller may change them in place. With `first_slices`,
  // only the columns of that many first slices are read (ReadInto only): the caller fills
  // the others.
  void BeginRead(size_t width, size_t first_slices = SIZE_MAX);
  MatrixSpan<float> Read(uint64_t begin, uint64_t end);
  // The same rows assembled into `to` (end - begin rows of the matrix's width).
  void ReadInto(uint64_t begin, uint64_t end, MatrixSpan<float> to);
  void EndRead();

  IntermediateStats stats() const;

 private:
  void Flush();  // the staged rows into their slices

  size_t slice_width_ = 1;
  uint64_t chunk_rows_ = 0;
  size_t width_ = 0;
  size_t read_slices_ = 0;  // of the read pass
  std::vector<IntermediateRows> slices_;
  ChargedArray<float> rows_;  // one chunk of full rows: staged for a write, assembled by a read
  uint64_t staged_begin_ = 0;
  uint64_t staged_end_ = 0;
};

}  // namespace strata
