// ColumnSlices holds an N-row matrix of the full-graph trainer as column slices of at most
// slice_width columns, each an IntermediateRows (on disk, or in memory), so that a
// propagation can run once per slice when N × the width does not fit in memory (column-sliced
// propagation). The matrix a propagation gathers from is loaded one slice at a time
// into an N × slice_width resident matrix while the adjacency streams past; the propagation's
// output is written slice by slice into another ColumnSlices of the same slice width, which
// its consumers then read back as full rows. A matrix no wider than one slice is one slice,
// and its full rows pass straight through to it (nothing staged, nothing copied). The memory
// floor is one resident slice plus two chunk buffers per slice and, when a matrix has several
// slices, one chunk of full rows.
//
// A matrix of `width` columns has SliceCount(width) slices; slice s is its columns
// [s × slice_width, min(width, (s + 1) × slice_width)). Each output column of a propagation
// depends only on the same input column, so slicing changes no value.
//
// Passes, each in row order and in pieces inside one chunk (as IntermediateRows'):
// - BeginWrite/EndWrite, and between them Write (full rows, staged in the chunk buffer and
//   split into the slices) or WriteSlice (one slice's rows; each slice's pieces in order);
// - BeginRead/EndRead, and between them Read (full rows, assembled from every
//   slice) or ReadSlice (one slice's rows);
// - Load and Store: one slice whole, its own pass.
// Invariant: at most one of the full-matrix passes is open at a time; a read returns what the
// last write pass wrote (of the width it wrote).
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
  // Slices of an rows × max_width matrix, slice_width columns each (the last may be narrower;
  // one slice when slice_width >= max_width), in scratch files in `scratch_dir`, or in memory
  // when it is empty; `what` names it in budget and I/O errors. Full rows are split and
  // assembled on up to `threads` threads.
  ColumnSlices(uint64_t rows, size_t max_width, size_t slice_width, uint64_t chunk_rows,
               const std::string& scratch_dir, MemoryBudget& budget, std::string_view what,
               unsigned threads = 1);

  // Bytes charged to the budget on disk: each slice's chunk buffers and, with several slices,
  // one chunk of full rows.
  static uint64_t ChargedBytes(uint64_t rows, size_t max_width, size_t slice_width,
                               uint64_t chunk_rows);

  size_t slice_width() const { return slice_width_; }
  size_t SliceCount(size_t width) const { return (width + slice_width_ - 1) / slice_width_; }
  // The first column of slice s, and its width, in a matrix of `width` columns.
  size_t FirstColumn(size_t s) const { return s * slice_width_; }
  size_t SliceWidth(size_t s, size_t width) const;
  // Slice s whole, into `rows` (rows × its width), and back: its own read and write passes.
  // While slice 0 is held in memory (BeginWrite's first_slice), Load(0) finds it there (`rows`
  // must be that memory) and reads nothing; loading another slice ends the hold (the caller
  // has one resident matrix), after which slice 0 is lost: reading it before it is written
  // again is an internal error.
  void Load(size_t s, MatrixSpan<float> rows);
  // Store(s, width, rows) writes slice s of a matrix of `width` columns.
  void Store(size_t s, size_t width, MatrixSpan<const float> rows);

  // Starts writing a matrix of `width` columns. With `first_slice` (rows × SliceWidth(0,
  // width)), slice 0's columns written as full rows are held there instead of written to its
  // file: the caller's resident matrix, from which a propagation then starts without a pass
  // over the disk (the slices' transfers are most of what a sliced propagation costs beyond
  // the unsliced one).
  void BeginWrite(size_t width, MatrixSpan<float> first_slice = {});
  // Full rows [begin, end) to fill; they reach the slices at EndWrite, or before, at a Write
  // that does not continue them in their chunk.
  MatrixSpan<float> Write(uint64_t begin, uint64_t end);
  // Rows [begin, end) of slice s alone to fill.
  MatrixSpan<float> WriteSlice(size_t s, uint64_t begin, uint64_t end);
  void EndWrite();

  // Starts reading what the last write pass wrote. With `whole_chunks`, the caller reads full
  // rows (Read, not ReadSlice) a whole chunk at a time, and each slice's chunk that travelled
  // without its zeros is expanded straight into them (IntermediateRows::ReadInto) rather than
  // in its buffer and then copied.
  void BeginRead(bool whole_chunks = false);
  // Full rows [begin, end), assembled from the slices. The caller may change them in place
  // only in a matrix it rewrites before reading it again (IntermediateRows::Read).
  MatrixSpan<float> Read(uint64_t begin, uint64_t end);
  // Rows [begin, end) of slice s alone.
  MatrixSpan<float> ReadSlice(size_t s, uint64_t begin, uint64_t end);
  void EndRead();

  IntermediateStats stats() const;

 private:
  void Flush();  // the staged rows into their slices
  bool Held() const { return held_.data() != nullptr; }
  void CheckFirstSlice() const;  // throws if slice 0 was lost with its hold
  bool Whole() const { return SliceCount(width_) == 1; }  // full rows are slice 0's

  size_t slice_width_ = 1;
  uint64_t chunk_rows_ = 0;
  unsigned threads_ = 1;
  size_t width_ = 0;  // of the last write
  std::vector<IntermediateRows> slices_;
  MatrixSpan<float> held_;    // slice 0's rows in the caller's memory, or empty
  bool first_lost_ = false;   // a hold ended: slice 0's file is not this matrix's
  ChargedArray<float> rows_;  // one chunk of full rows: staged for a write, assembled by a read
  bool read_into_ = false;    // the read pass assembles by IntermediateRows::ReadInto
  uint64_t staged_begin_ = 0;
  uint64_t staged_end_ = 0;
};

}  // namespace strata
