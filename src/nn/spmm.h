// SpMM: sparse (a block's edges) times dense (one row per node) products, the aggregation
// step of message passing, and their transposes, which are the gradients with respect to
// the dense input (dL/dH = A^T dL/dX: §2.1 of T. Huang, "Efficient Systems for Large-Scale
// Graph Representation Learning", MIT PhD thesis, 2025: "the thesis" below).
//
// Fused gather + aggregate (the thesis's §5.3.2, "Sample-Gather-Aggregation"): the kernels read
// each neighbour's row straight out of the layer's input matrix by its local id. A
// framework that expresses aggregation as index_select + index_add (PyTorch's h[col]) first
// materialises one row per edge, E x F values written and read back; for the first layer
// of a 15,10,5 sampled GraphSAGE batch that is ~900k x 128 floats (~460 MB) per step that
// these kernels never write. Where GraphSAGE and GCN aggregate before transforming (a sampled
// first layer: nn/product_order.h), that layer also never runs the transpose: input features
// need no gradient, so that SpMM is skipped entirely (the dead-code elimination of Joestar,
// the thesis's §5.3.3).
//
// Determinism: forward kernels give each destination row to one thread; transposed kernels
// walk a BlockCsc and give each source row to one thread; sums run in edge order. Results
// are bit-identical for any thread count.
//
// Shapes: `in`/`grad_in` have csr.num_src rows, `out`/`grad_out` have csr.num_dst rows, all
// the same number of columns. Mismatches throw strata::Error.
#pragma once

#include <span>
#include <type_traits>

#include "nn/matrix.h"
#include "nn/sparse.h"

namespace strata {

enum class Reduce { kSum, kMean };

// out[d] = sum (or mean) of in[s] over the edges s -> d; 0 for a destination without edges.
// With csr.weights, edge e counts weights[e] times: the sum is weighted, and the mean divides
// by d's total weight (a self-normalised estimate of the full neighbourhood's mean).
template <typename T>
void Spmm(const BlockCsr& csr, Reduce reduce, MatrixSpan<const std::type_identity_t<T>> in,
          MatrixSpan<T> out, unsigned threads = 1);

// The transpose of Spmm: grad_in[s] (+)= sum over edges s -> d of grad_out[d] (divided by
// deg(d) for kMean), each term times the edge's weight if csr has weights (and divided by d's
// total weight instead of deg(d)). With accumulate false, grad_in is overwritten (0 for sources
// without edges); with true, the sums are added to it. csc must be built from csr.
template <typename T>
void SpmmTransposed(const BlockCsr& csr, const BlockCsc& csc, Reduce reduce,
                    MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                    bool accumulate, unsigned threads = 1);

// Multi-head edge-weighted aggregation for attention: with H = weights.cols() heads and
// F = in.cols() / H features per head, out[d][h*F .. (h+1)*F) = sum over edges e = s -> d
// of weights(e, h) * in[s][h*F .. (h+1)*F). weights has one row per edge.
template <typename T>
void SpmmWeighted(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> weights,
                  MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out,
                  unsigned threads = 1);

// Its transpose: grad_in[s][head h] (+)= sum over edges e = s -> d of weights(e, h) *
// grad_out[d][head h].
template <typename T>
void SpmmWeightedTransposed(const BlockCsc& csc, MatrixSpan<const std::type_identity_t<T>> weights,
                            MatrixSpan<const std::type_identity_t<T>> grad_out,
                            MatrixSpan<T> grad_in, bool accumulate, unsigned threads = 1);

// GCN's symmetric normalisation with a self loop: out[d] = norm[d] * (norm[d] * in[d] +
// sum over edges s -> d of norm[s] * in[s]), norm[v] = 1 / sqrt(deg(v) + 1) with deg the
// node's in-degree in the full graph. norm has num_src entries, destinations first. With
// csr.weights each edge's term is times its weight: an unbiased estimate of the full sum when
// the weights are inverse inclusion probabilities.
template <typename T>
void SpmmGcn(const BlockCsr& csr, std::span<const std::type_identity_t<T>> norm,
             MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, unsigned threads = 1);

// Its transpose: grad_in[s] (+)= norm[s] * (sum over edges s -> d of norm[d] * grad_out[d]
// + (s < num_dst ? norm[s] * grad_out[s] : 0)), edge terms times csc.weights if any.
template <typename T>
void SpmmGcnTransposed(const BlockCsc& csc, std::span<const std::type_identity_t<T>> norm,
                       MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                       bool accumulate, unsigned threads = 1);

}  // namespace strata
