// SDDMM: sampled dense-dense products, one value per edge and head computed from the rows of
// the edge's source and destination (eq. 2.6 of T. Huang, "Efficient Systems for Large-Scale
// Graph Representation Learning", MIT PhD thesis, 2025: "the thesis" below), plus the
// per-node edge sums that are their gradients. GAT uses the ⊕ form for attention logits, e(s -> d,
// h) = el(s, h) + er(d, h), and the ⊙ form in backward, dL/dalpha(s -> d, h) = <dL/dout(d, h),
// Wh(s, h)> (the thesis's dL/dA = (dL/dX H^T) ⊙ I[A]).
//
// Per-edge matrices have one row per edge of the CSR (edge id order) and one column per
// head. Every edge value and node sum is written by one thread in edge order, so results do
// not depend on the thread count.
#pragma once

#include <type_traits>

#include "nn/matrix.h"
#include "nn/sparse.h"

namespace strata {

// out(e, h) = src_score(s, h) + dst_score(d, h) for every edge e = s -> d.
template <typename T>
void SddmmAdd(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> src_score,
              MatrixSpan<const std::type_identity_t<T>> dst_score, MatrixSpan<T> out,
              unsigned threads = 1);

// out(e, h) = <dst_rows[d][head h], src_rows[s][head h]> for every edge e = s -> d, with
// H = out.cols() heads of dst_rows.cols() / H features each.
template <typename T>
void SddmmDot(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> dst_rows,
              MatrixSpan<const std::type_identity_t<T>> src_rows, MatrixSpan<T> out,
              unsigned threads = 1);

// out(d, h) = sum of values(e, h) over the edges e into d (the gradient of SddmmAdd with
// respect to dst_score).
template <typename T>
void SumEdgesByDestination(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> values,
                           MatrixSpan<T> out, unsigned threads = 1);

// out(s, h) = sum of values(e, h) over the edges e out of s (the gradient of SddmmAdd with
// respect to src_score); csc lists each source's edges.
template <typename T>
void SumEdgesBySource(const BlockCsc& csc, MatrixSpan<const std::type_identity_t<T>> values,
                      MatrixSpan<T> out, unsigned threads = 1);

// out(v, h) = <rows[v][head h], vectors[h]>: one score per node and head, the el and er of
// GAT (rows is nodes x H*F, vectors is H x F).
template <typename T>
void HeadDots(MatrixSpan<const std::type_identity_t<T>> rows,
              MatrixSpan<const std::type_identity_t<T>> vectors, MatrixSpan<T> out,
              unsigned threads = 1);

}  // namespace strata
