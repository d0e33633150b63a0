#include "fullgraph/column_slices.h"

#include <algorithm>
#include <cstdint>

#include "nn/row_copy.h"
#include "strata/error.h"

namespace strata {
ColumnSlices::ColumnSlices(uint64_t rows, size_t max_width, size_t slice_width, uint64_t chunk_rows,
                           const std::string& scratch_dir, MemoryBudget& budget,
                           std::string_view what, unsigned threads)
    : slice_width_(std::min(slice_width, max_width)), chunk_rows_(chunk_rows), threads_(threads) {
  if (slice_width == 0) throw Error::Internal("ColumnSlices: slices need a width");
  for (size_t s = 0; s < SliceCount(max_width); ++s) {
    slices_.emplace_back(rows, SliceWidth(s, max_width), chunk_rows, scratch_dir, budget, what);
  }
  if (slices_.size() > 1) {
    rows_ = ChargedArray<float>(budget, std::min(rows, chunk_rows) * max_width, what);
  }
}

uint64_t ColumnSlices::ChargedBytes(uint64_t rows, size_t max_width, size_t slice_width,
                                    uint64_t chunk_rows) {
  if (slice_width >= max_width) return IntermediateRows::OnDiskBytes(rows, max_width, chunk_rows);
  uint64_t bytes = std::min(rows, chunk_rows) * max_width * sizeof(float);
  for (size_t first = 0; first < max_width; first += slice_width) {
    bytes +=
        IntermediateRows::OnDiskBytes(rows, std::min(slice_width, max_width - first), chunk_rows);
  }
  return bytes;
}

size_t ColumnSlices::SliceWidth(size_t s, size_t width) const {
  return std::min(slice_width_, width - FirstColumn(s));
}

void ColumnSlices::Load(size_t s, MatrixSpan<float> rows) {
  if (Held()) {
    if (s == 0) {
      if (rows.data() != held_.data()) {
        throw Error::Internal("ColumnSlices: the held slice loaded into other memory");
      }
      return;
    }
    held_ = {};
    first_lost_ = true;
  }
  if (s == 0) CheckFirstSlice();
  slices_[s].Load(rows);
}

void ColumnSlices::Store(size_t s, size_t width, MatrixSpan<const float> rows) {
  width_ = width;
  if (s == 0) {
    held_ = {};
    first_lost_ = false;
  }
  slices_[s].Store(rows);
}

void ColumnSlices::BeginWrite(size_t width, MatrixSpan<float> first_slice) {
  width_ = width;
  staged_begin_ = staged_end_ = 0;
  held_ = Whole() ? MatrixSpan<float>() : first_slice;
  first_lost_ = false;
  if (Held() && (held_.rows() != slices_[0].rows() || held_.cols() != SliceWidth(0, width))) {
    throw Error::Internal("ColumnSlices: the held slice's matrix has another shape");
  }
  for (size_t s = Held() ? 1 : 0; s < SliceCount(width); ++s) {
    slices_[s].BeginWrite(SliceWidth(s, width));
  }
}

MatrixSpan<float> ColumnSlices::Write(uint64_t begin, uint64_t end) {
  if (Whole()) return slices_[0].Write(begin, end);
  // Pieces that follow each other in one chunk are staged together, so that most splits are a
  // chunk's, enough rows to share among threads (a forward transform writes 128 at a time).
  const uint64_t chunk_end = (staged_begin_ / chunk_rows_ + 1) * chunk_rows_;
  if (begin != staged_end_ || end > chunk_end) {
    Flush();
    staged_begin_ = begin;
  }
  staged_end_ = end;
  return {rows_.data() + (begin - staged_begin_) * width_, end - begin, width_};
}

MatrixSpan<float> ColumnSlices::WriteSlice(size_t s, uint64_t begin, uint64_t end) {
  if (s == 0 && Held()) throw Error::Internal("ColumnSlices: the held slice written alone");
  return slices_[s].Write(begin, end);
}

void ColumnSlices::Flush() {
  if (staged_end_ == staged_begin_) return;
  const MatrixSpan<const float> staged(rows_.data(), staged_end_ - staged_begin_, width_);
  for (size_t s = 0; s < SliceCount(width_); ++s) {
    const MatrixSpan<float> to = s == 0 && Held()
                                     ? held_.RowRange(staged_begin_, staged_end_ - staged_begin_)
                                     : slices_[s].Write(staged_begin_, staged_end_);
    // On the runner's threads: splitting and assembling full rows copies the whole matrix each
    // pass, and on the caller's thread alone it was most of a sliced epoch's serial time.
    CopyRows(staged.Sub(0, FirstColumn(s), to.rows(), to.cols()), to, threads_);
  }
  staged_begin_ = staged_end_;
}

void ColumnSlices::EndWrite() {
  if (!Whole()) Flush();
  for (size_t s = Held() ? 1 : 0; s < SliceCount(width_); ++s) slices_[s].EndWrite();
}

void ColumnSlices::CheckFirstSlice() const {
  if (first_lost_) throw Error::Internal("ColumnSlices: slice 0 read after its hold ended");
}

void ColumnSlices::BeginRead(bool whole_chunks) {
  CheckFirstSlice();
  // One slice's rows are the full rows, read where they lie.
  read_into_ = whole_chunks && !Whole();
  for (size_t s = Held() ? 1 : 0; s < SliceCount(width_); ++s) slices_[s].BeginRead(read_into_);
}

MatrixSpan<float> ColumnSlices::Read(uint64_t begin, uint64_t end) {
  if (Whole()) return slices_[0].Read(begin, end);
  const MatrixSpan<float> assembled(rows_.data(), end - begin, width_);
  for (size_t s = 0; s < SliceCount(width_); ++s) {
    const MatrixSpan<float> to =
        assembled.Sub(0, FirstColumn(s), end - begin, SliceWidth(s, width_));
    if (read_into_ && !(s == 0 && Held())) {
      slices_[s].ReadInto(begin, end, to, threads_);
    } else {
      CopyRows(ReadSlice(s, begin, end), to, threads_);
    }
  }
  return assembled;
}

MatrixSpan<float> ColumnSlices::ReadSlice(size_t s, uint64_t begin, uint64_t end) {
  return s == 0 && Held() ? held_.RowRange(begin, end - begin) : slices_[s].Read(begin, end);
}

void ColumnSlices::EndRead() {
  read_into_ = false;
  for (size_t s = Held() ? 1 : 0; s < SliceCount(width_); ++s) slices_[s].EndRead();
}

IntermediateStats ColumnSlices::stats() const {
  IntermediateStats total;
  for (const IntermediateRows& slice : slices_) total += slice.stats();
  return total;
}

}  // namespace strata
