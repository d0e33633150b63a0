// Edge softmax: for every destination and head, a softmax over the logits of the
// destination's incoming edges (GAT's attention normalisation), and its backward.
//
// Numerically stable: each segment subtracts its maximum before exponentiating, so logits
// of any magnitude give finite weights that sum to 1. A destination without edges has
// nothing to normalise and writes nothing.
#pragma once

#include <type_traits>

#include "nn/matrix.h"
#include "nn/sparse.h"

namespace strata {

// probs(e, h) = exp(logits(e, h)) / sum over edges e' into the same destination of
// exp(logits(e', h)). logits and probs: one row per edge, one column per head; may alias.
template <typename T>
void EdgeSoftmax(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> logits,
                 MatrixSpan<T> probs, unsigned threads = 1);

// grad_logits(e, h) = probs(e, h) * (grad_probs(e, h) - sum over edges e' into the same
// destination of probs(e', h) * grad_probs(e', h)). grad_logits may alias grad_probs.
template <typename T>
void EdgeSoftmaxBackward(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> probs,
                         MatrixSpan<const std::type_identity_t<T>> grad_probs,
                         MatrixSpan<T> grad_logits, unsigned threads = 1);

}  // namespace strata
