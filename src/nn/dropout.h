// Dropout kernels: dropout of dense, sparse and CSR inputs, and ReLU or ELU fused with the
// dropout after it (one pass over the matrix instead of two), each with its backward.
//
// Dropout masks are a function of (seed, row key, column) only: row i draws from its own stream
// Rng(MixSeed(seed, key)), its key being i, counted from an offset, or one given per row where a
// kernel takes RowKeys (nn/dropout_masks.h: a matrix processed in row ranges gets the masks of
// the whole; a sampled batch's rows are keyed by their nodes), 16 bits per element, and keeps the
// element when those bits are >= round(p * 65536). So a mask is reproducible from the seed
// (backward regenerates it instead of storing it) and independent of how rows are split over
// threads. p is thereby rounded to a multiple of 1/65536 for the keep decision; kept values are
// scaled by exactly 1/(1-p).
//
// Unless noted, `in` and `out` (or the gradients) may be the same matrix, and shapes must
// match (checked; strata::Error on a mismatch).
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "nn/dropout_masks.h"
#include "nn/matrix.h"

namespace strata {

// out = in * mask / (1 - p); p == 0 copies. Requires 0 <= p < 1.
template <typename T>
void Dropout(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, double p,
             uint64_t seed, unsigned threads = 1, RowKeys keys = {});
// Dropout of a sparse input in place (Kipf's sparse_dropout): only nonzero elements draw, 16
// bits each from the row's stream in column order, so the cost follows the nonzeros and a row
// gets the same mask whether it is stored dense or as its nonzeros. Zeros stay zero.
template <typename T>
void DropoutNonzeros(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads = 1);
// The same over a CSR matrix's values: row i holds values[indptr[i] - indptr[0] ..
// indptr[i + 1] - indptr[0]), ascending columns, and gets the mask the dense row holding those
// values would.
template <typename T>
void DropoutNonzerosCsr(std::span<const uint64_t> indptr, std::span<T> values, double p,
                        uint64_t seed, unsigned threads = 1);
// grad_in = grad_out * mask / (1 - p) with the mask regenerated from the same seed.
template <typename T>
void DropoutBackward(MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                     double p, uint64_t seed, unsigned threads = 1);

// x = dropout(relu(x)) in place, one pass. The backward needs no mask: an element of the
// output is > 0 exactly when the input was > 0 and the mask kept it. With first_column, x is
// the columns from there on of the rows the masks are drawn for (FillRowMasks).
template <typename T>
void ReluDropout(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads = 1, RowKeys keys = {},
                 size_t first_column = 0);
// grad = grad / (1 - p) where y > 0, else 0; y is ReluDropout's output. In place.
template <typename T>
void ReluDropoutBackward(MatrixSpan<const std::type_identity_t<T>> y, MatrixSpan<T> grad, double p,
                         unsigned threads = 1);

// x = dropout(elu(x)) in place (ELU with alpha 1: x > 0 ? x : exp(x) - 1), the mask drawn
// from `seed` as Dropout draws it (first_column as ReluDropout's).
template <typename T>
void EluDropout(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads = 1, RowKeys keys = {},
                size_t first_column = 0);
// grad = grad * mask / (1 - p) * elu'(x), in place, where y is EluDropout's output for the
// same p and seed: the mask is drawn again and elu'(x) (1, or elu(x) + 1 for x <= 0) is
// recovered from a kept y, so no mask or input needs to be stored.
template <typename T>
void EluDropoutBackward(MatrixSpan<const std::type_identity_t<T>> y, MatrixSpan<T> grad, double p,
                        uint64_t seed, unsigned threads = 1, RowKeys keys = {});

}  // namespace strata
