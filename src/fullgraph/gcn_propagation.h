// The full graph's GCN propagation Â = D^-1/2 (A + I) D^-1/2 over one RoBW block of the
// adjacency, and its transpose, as plain functions over spans. Row i of A lists i's
// in-neighbours (graph/indices.bin), so Â_ii = norm_i², Â_ij = norm_i norm_j for each stored
// edge j -> i, with norm_v = 1 / sqrt(in-degree(v) + 1): the normalisation of the mini-batch
// GCN (nn/spmm.h, SpmmGcn), so the two paths train the same model.
//
// A block is rows [begin, end): indptr holds the whole graph's offsets (global edge ids) and
// `neighbours` the block's ids, edge indptr[begin] first, each `id_bytes` wide.
//
// Determinism: Propagate gives each output row to one thread and sums its terms in edge order.
// PropagateTransposed scatters row i's terms to its neighbours' rows in row order, threads
// splitting the columns, so every output element's sum runs in (row, edge) order whatever
// the threads and whatever the blocks — no atomics, and directed graphs need no transposed
// copy of the adjacency.
#pragma once

#include <cstdint>
#include <span>

#include "fullgraph/row_blocks.h"
#include "nn/matrix.h"

namespace strata {

struct AdjacencyBlock {
  RowBlock rows;
  std::span<const uint64_t> indptr;  // the whole graph's, num_nodes + 1
  const std::byte* neighbours = nullptr;
  uint32_t id_bytes = 4;
};

// norm[v] = 1 / sqrt(in-degree(v) + 1) for each node v, from the whole graph's indptr (one
// more entry than norm).
void GcnNormalisation(std::span<const uint64_t> indptr, std::span<float> norm);

// out.row(i - begin) = norm_i (norm_i in_i + Σ_{j -> i} norm_j in_j) for the block's rows i.
// `in` has one row per node; `out` one per block row.
void Propagate(const AdjacencyBlock& block, std::span<const float> norm, MatrixSpan<const float> in,
               MatrixSpan<float> out, unsigned threads);

// grad_in += the block rows' share of Âᵀ grad_out: for each block row i, grad_in_i +=
// norm_i² g_i and grad_in_j += norm_j norm_i g_i for each j -> i, where g_i =
// grad_out.row(i - begin). `grad_in` has one row per node.
void PropagateTransposed(const AdjacencyBlock& block, std::span<const float> norm,
                         MatrixSpan<const float> grad_out, MatrixSpan<float> grad_in,
                         unsigned threads);

}  // namespace strata
