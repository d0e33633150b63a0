// The two products of the full-graph GCN that touch the input features, over one group of
// their rows (an InputGroup), dense or sparse (CSR): the forward transform P = D X W and the weight
// gradient dW += Xᵀ D dP, D the rows' inverse L1 norms (--row-normalize's scale, or 1). Dense
// groups go to GEMM; sparse ones are SpMM (each output row a sum over the row's stored values, in
// column order) and its transpose (each stored value's term added to dW's row of its column, rows
// in order, threads splitting dW into tiles by ForScatterTiles), so a sparse input costs its
// nonzeros, not its width, and the sums' order depends on neither threads nor blocks.
#pragma once

#include <cstdint>
#include <span>

#include "nn/matrix.h"

namespace strata {

// Rows [first, first + rows) of the input. Dense: `dense` holds them. Sparse: row i's values
// are values[indptr[i] - indptr[0] ..  indptr[i + 1] - indptr[0]) at columns[...] likewise,
// indptr having rows + 1 entries.
struct InputGroup {
  uint64_t first = 0;
  uint64_t rows = 0;
  MatrixSpan<const float> dense;
  std::span<const uint64_t> indptr;
  const uint32_t* columns = nullptr;
  const float* values = nullptr;
  // With --row-normalize, 1 / each row's L1 norm (before dropout); empty otherwise.
  std::span<const float> row_scale;

  bool sparse() const { return !indptr.empty(); }
  // Rows [begin, end) of the group, a group of their own over the same storage.
  InputGroup Rows(uint64_t begin, uint64_t end) const;
};

// scale[i] = 1 / the L1 norm of the group's row i (1 for a row of zeros), each row summed in
// column order, whatever the threads: --row-normalize as a scale of the narrow products,
// (D X) W = D (X W) and drop(D X)ᵀ dP = drop(X)ᵀ (D dP), so the features are never rewritten.
void InverseRowNorms(const InputGroup& group, std::span<float> scale, unsigned threads);

// out (rows × W's columns) = D · group · weight: each row's sum, then its scale.
void InputTimes(const InputGroup& group, MatrixSpan<const float> weight, MatrixSpan<float> out,
                unsigned threads);

// weight_grad (+)= groupᵀ · D grad (grad: rows × weight_grad's columns); overwrites when
// `accumulate` is false. A dense group's grad rows are scaled in place first (GEMM takes D grad);
// a sparse group's are only read, each tile's thread scaling a row's columns as it goes.
void InputTransposedTimes(const InputGroup& group, MatrixSpan<float> grad,
                          MatrixSpan<float> weight_grad, bool accumulate, unsigned threads);

}  // namespace strata
