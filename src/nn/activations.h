// Elementwise activation kernels between the layers, forward and backward: ReLU and
// LeakyReLU. Dropout, and the activations fused with it, are in dropout.h.
//
// Unless noted, `in` and `out` (or the gradients) may be the same matrix, and shapes must
// match (checked; strata::Error on a mismatch).
#pragma once

#include <type_traits>

#include "nn/matrix.h"

namespace strata {

template <typename T>
void Relu(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, unsigned threads = 1);
// grad_in = grad_out where the forward output was > 0, else 0 (`out` is the forward output).
template <typename T>
void ReluBackward(MatrixSpan<const std::type_identity_t<T>> out,
                  MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                  unsigned threads = 1);

inline constexpr double kLeakyReluSlope = 0.2;

template <typename T>
void LeakyRelu(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out,
               double slope = kLeakyReluSlope, unsigned threads = 1);
// `in` is the forward input (its sign picks the slope); must not alias grad_in unless it is
// no longer needed element by element (it is read before each element is written).
template <typename T>
void LeakyReluBackward(MatrixSpan<const std::type_identity_t<T>> in,
                       MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                       double slope = kLeakyReluSlope, unsigned threads = 1);

}  // namespace strata
