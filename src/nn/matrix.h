// Dense row-major matrices for the model code: MatrixSpan is a non-owning view that kernels
// take, BasicMatrix owns 64-byte aligned storage that it reuses across steps.
//
// Every type here is a template on the scalar type T. float is the production instantiation
// (Matrix); double exists so that each layer's backward can be checked against central
// finite differences in double precision, where the check is meaningful to 1e-4 and beyond.
//
// MatrixSpan invariants: stride() >= cols(); element (i, j) is data()[i * stride() + j]. A
// span of T converts implicitly to a span of const T, like std::span.
//
// BasicMatrix invariants: stride == cols (rows are packed, so a matrix is one contiguous
// array of rows() * cols() values, as BLAS and checkpoints want); capacity() >= size();
// data() is aligned to 64 bytes. Resize never shrinks the allocation, so a matrix reused
// for every training step stops allocating once it has seen the largest batch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>

#include "strata/error.h"

namespace strata {

template <typename T>
class MatrixSpan {
 public:
  MatrixSpan() = default;
  MatrixSpan(T* data, size_t rows, size_t cols) : MatrixSpan(data, rows, cols, cols) {}
  MatrixSpan(T* data, size_t rows, size_t cols, size_t stride)
      : data_(data), rows_(rows), cols_(cols), stride_(stride) {}
  template <typename U>
  requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
      MatrixSpan(MatrixSpan<U> other)  // NOLINT: implicit like std::span
      : data_(other.data()), rows_(other.rows()), cols_(other.cols()), stride_(other.stride()) {}

  T* data() const { return data_; }
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }
  size_t stride() const { return stride_; }
  bool empty() const { return rows_ == 0 || cols_ == 0; }
  bool contiguous() const { return stride_ == cols_ || rows_ <= 1; }

  T* row(size_t i) const { return data_ + i * stride_; }
  std::span<T> row_span(size_t i) const { return {row(i), cols_}; }
  T& operator()(size_t i, size_t j) const { return data_[i * stride_ + j]; }

  // Rows [begin, begin + count).
  MatrixSpan RowRange(size_t begin, size_t count) const {
    return {data_ + begin * stride_, count, cols_, stride_};
  }
  // The count_rows x count_cols submatrix whose top-left element is (row0, col0).
  MatrixSpan Sub(size_t row0, size_t col0, size_t count_rows, size_t count_cols) const {
    return {data_ + row0 * stride_ + col0, count_rows, count_cols, stride_};
  }

 private:
  T* data_ = nullptr;
  size_t rows_ = 0;
  size_t cols_ = 0;
  size_t stride_ = 0;
};

// Throws Error::Internal naming `kernel` unless a and b (spans or matrices) have the same
// number of rows and of columns.
template <typename A, typename B>
void CheckSameShape(const char* kernel, const A& a, const B& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    throw Error::Internal(std::string(kernel) + ": shapes " + std::to_string(a.rows()) + "x" +
                          std::to_string(a.cols()) + " and " + std::to_string(b.rows()) + "x" +
                          std::to_string(b.cols()) + " differ");
  }
}

template <typename T>
class BasicMatrix;

// Bytes allocated by `matrices` (their capacities): what a layer or model reports as its
// workspace for the memory budget.
template <typename T>
size_t CapacityBytes(std::initializer_list<const BasicMatrix<T>*> matrices) {
  size_t bytes = 0;
  for (const BasicMatrix<T>* m : matrices) bytes += m->capacity() * sizeof(T);
  return bytes;
}

template <typename T>
class BasicMatrix {
 public:
  static constexpr size_t kAlignment = 64;

  BasicMatrix() = default;
  // A rows x cols matrix of zeros.
  BasicMatrix(size_t rows, size_t cols) {
    Resize(rows, cols);
    SetZero();
  }
  BasicMatrix(const BasicMatrix& other) { CopyFrom(other.span()); }
  BasicMatrix& operator=(const BasicMatrix& other) {
    if (this != &other) CopyFrom(other.span());
    return *this;
  }
  BasicMatrix(BasicMatrix&& other) noexcept { swap(other); }
  BasicMatrix& operator=(BasicMatrix&& other) noexcept {
    swap(other);
    return *this;
  }

  // Makes the matrix rows x cols. The allocation is kept when it is large enough and grows
  // with 25% slack otherwise; the values afterwards are unspecified.
  void Resize(size_t rows, size_t cols) {
    size_t need = rows * cols;
    if (need > capacity_) {
      size_t grown = std::max(need, capacity_ + capacity_ / 4);
      data_.reset(
          static_cast<T*>(::operator new[](grown * sizeof(T), std::align_val_t{kAlignment})));
      capacity_ = grown;
    }
    rows_ = rows;
    cols_ = cols;
  }
  // Becomes a packed copy of `source` (which may be strided), reusing capacity.
  void CopyFrom(MatrixSpan<const T> source) {
    Resize(source.rows(), source.cols());
    for (size_t i = 0; i < rows_; ++i) {
      std::memcpy(row(i), source.row(i), cols_ * sizeof(T));
    }
  }
  void SetZero() { Fill(T{0}); }
  void Fill(T value) { std::fill_n(data(), size(), value); }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }
  size_t size() const { return rows_ * cols_; }
  size_t capacity() const { return capacity_; }

  T* row(size_t i) { return data() + i * cols_; }
  const T* row(size_t i) const { return data() + i * cols_; }
  T& operator()(size_t i, size_t j) { return data()[i * cols_ + j]; }
  const T& operator()(size_t i, size_t j) const { return data()[i * cols_ + j]; }

  std::span<T> values() { return {data(), size()}; }
  std::span<const T> values() const { return {data(), size()}; }
  MatrixSpan<T> span() { return {data(), rows_, cols_}; }
  MatrixSpan<const T> span() const { return {data(), rows_, cols_}; }

  void swap(BasicMatrix& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(rows_, other.rows_);
    std::swap(cols_, other.cols_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  struct AlignedDelete {
    void operator()(T* p) const { ::operator delete[](p, std::align_val_t{kAlignment}); }
  };
  static_assert(std::is_trivially_copyable_v<T>);

  std::unique_ptr<T[], AlignedDelete> data_;
  size_t rows_ = 0;
  size_t cols_ = 0;
  size_t capacity_ = 0;
};

using Matrix = BasicMatrix<float>;
using MatrixD = BasicMatrix<double>;

}  // namespace strata
