// The full graph's propagations over one RoBW block of the adjacency, and their transposes, as
// plain functions over spans: out_i = d_i (s_i in_i + Σ_{j -> i} s_j in_j), the first term only
// with a self loop, for per-node weights d (destination) and s (source). Row i of A lists i's
// in-neighbours (graph/indices.bin).
// - GCN's Â = D^-1/2 (A + I) D^-1/2: d = s = norm, norm_v = 1 / sqrt(in-degree(v) + 1), with
//   the self loop, the normalisation of the mini-batch GCN (nn/spmm.h, SpmmGcn);
// - SAGE's mean: d = 1 / in-degree (0 for a node without in-edges, which aggregates 0, as the
//   mini-batch SAGEConv), s = 1, no self loop; on an undirected graph its transpose is the
//   gather with d = 1 and s = 1 / in-degree.
// So either path trains the model the mini-batch path does.
//
// A block is rows [begin, end): indptr holds those rows' offsets (global edge ids, indexed by
// node id) and `neighbours` the block's ids, edge indptr[begin] first, each `id_bytes` wide.
//
// Determinism: Propagate gives each output row to one thread and sums its terms in edge order.
// PropagateTransposed scatters row i's terms to its neighbours' rows in row order, threads
// splitting grad_in into tiles (ForScatterTiles), each adding only the terms that land in its
// tile, so every output element's sum runs in (row, edge) order whatever the threads and
// whatever the blocks — no atomics, and directed graphs need no transposed copy of the adjacency.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "fullgraph/row_blocks.h"
#include "nn/matrix.h"
#include "nn/parallel.h"

namespace strata {

// The CSR offsets of a run of rows, indexed by node id: offsets[row - first] is row's first
// edge, for row in [first, first + offsets.size() - 1]. The whole graph's (first 0), or a
// piece's (the runner keeps only its rows' lengths, grouped_row_offsets.h, and expands a piece
// at a time).
class RowOffsetsView {
 public:
  RowOffsetsView() = default;
  RowOffsetsView(std::span<const uint64_t> offsets, uint64_t first)
      : offsets_(offsets), first_(first) {}

  uint64_t operator[](uint64_t row) const { return offsets_[row - first_]; }
  // Whether the offsets of rows [begin, end] are here.
  bool Covers(uint64_t begin, uint64_t end) const {
    return begin >= first_ && end - first_ < offsets_.size();
  }
  // Offsets of rows [row, row + count), count of them.
  std::span<const uint64_t> Span(uint64_t row, uint64_t count) const {
    return offsets_.subspan(row - first_, count);
  }

 private:
  std::span<const uint64_t> offsets_;
  uint64_t first_ = 0;
};

struct AdjacencyBlock {
  RowBlock rows;
  RowOffsetsView indptr;  // covers rows [rows.begin, rows.end]
  const std::byte* neighbours = nullptr;
  uint32_t id_bytes = 4;
  uint64_t nodes = 0;  // the graph's, so the gathered matrix's rows
};

// The weights of a propagation; an empty span weighs every node 1.
struct PropagationWeights {
  std::span<const float> destination;  // d, one per node
  std::span<const float> source;       // s, one per node
  bool self_loop = false;

  static PropagationWeights Gcn(std::span<const float> norm) { return {norm, norm, true}; }
  // The same propagation of rows already weighed by their source weight (ScaleBySource).
  PropagationWeights OfScaledSources() const { return {destination, {}, self_loop}; }
  static PropagationWeights Mean(std::span<const float> inv_degree) { return {inv_degree, {}}; }
  // The mean's transpose as a gather, on an undirected graph.
  static PropagationWeights MeanTransposed(std::span<const float> inv_degree) {
    return {{}, inv_degree};
  }
};

// Runs fn(first row, end row) over ranges of the block's rows (node ids) of about equal work,
// a row weighing its edges and one more (its own), on up to `threads` threads: equal row counts
// would leave one thread most of the edges where in-degrees follow the node ids (a citation
// graph by publication date). One range when the work, at work_per_edge a weight, is small.
template <typename Fn>
void ForBlockRanges(const AdjacencyBlock& b, unsigned threads, uint64_t work_per_edge, Fn&& fn) {
  const uint64_t first = b.rows.begin;
  ForEdgeRanges(threads, b.indptr.Span(first, b.rows.end - first + 1), work_per_edge,
                [&](uint64_t begin, uint64_t end) { fn(first + begin, first + end); });
}

// How many edges ahead a gather over rows of `cols` floats prefetches its neighbour's row, across
// destinations: about 128 cache lines in flight, 16 to 64 rows.
uint64_t PrefetchDistance(size_t cols);

// norm[v] = 1 / sqrt(in-degree(v) + 1) for each node v of a run of nodes, from their offsets
// (one more entry than norm).
void GcnNormalisation(std::span<const uint64_t> indptr, std::span<float> norm);
// inv_degree[v] = 1 / in-degree(v), 0 for a node without in-edges.
void InverseInDegrees(std::span<const uint64_t> indptr, std::span<float> inv_degree);

// in.row(j) *= s_j for every node j (nothing when `source` is empty, weighing every node 1), on
// up to `threads` threads: a gather's source weights
// applied to its input once, before its passes, rather than per edge (a random load beside
// each neighbour's row); Propagate then runs with weights.OfScaledSources(). The sums are of
// the rounded products s_j in_j, the same in every plan, as every plan scales its input so.
void ScaleBySource(std::span<const float> source, MatrixSpan<float> in, unsigned threads);

// out.row(i - begin) = d_i (s_i in_i [self loop] + Σ_{j -> i} s_j in_j) for the block's rows i.
// `in` has one row per node; `out` one per block row.
void Propagate(const AdjacencyBlock& block, const PropagationWeights& weights,
               MatrixSpan<const float> in, MatrixSpan<float> out, unsigned threads);

// grad_in += the block rows' share of the transpose applied to grad_out: for each block row i,
// grad_in_j += s_j d_i g_i for each j -> i (and grad_in_i += s_i d_i g_i with the self loop),
// where g_i = grad_out.row(i - begin). `grad_in` has one row per node.
void PropagateTransposed(const AdjacencyBlock& block, const PropagationWeights& weights,
                         MatrixSpan<const float> grad_out, MatrixSpan<float> grad_in,
                         unsigned threads);

}  // namespace strata
