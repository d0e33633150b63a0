// A row broadcast and its adjoint, the kernels of a layer's bias (layer_bias.h): every row of a
// matrix set to one row, and the sums of a matrix's columns (the bias gradient).
#pragma once

#include <span>
#include <type_traits>

#include "nn/matrix.h"

namespace strata {

// Every row of out = bias (bias.size() == out.cols()).
template <typename T>
void BroadcastRows(std::span<const std::type_identity_t<T>> bias, MatrixSpan<T> out,
                   unsigned threads = 1);
// out[j] = sum over rows i of in(i, j), in row order (out.size() == in.cols()); with
// `accumulate`, the sums continue from out's values, so row ranges summed in order give the
// whole matrix's sums exactly.
template <typename T>
void ColumnSums(MatrixSpan<const std::type_identity_t<T>> in, std::span<T> out,
                unsigned threads = 1, bool accumulate = false);

}  // namespace strata
