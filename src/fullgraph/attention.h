// GAT's attention over the full graph, as plain functions over one RoBW block of the adjacency,
// so that the full-graph runner trains GAT with the graph streamed (full_graph_runner.h). The
// layer is the mini-batch GATConv's (nn/gat_conv.h) over every in-edge:
//   e(s -> d, k) = LeakyReLU_0.2(el_s[k] + er_d[k]),  el = <a_l[k], Wh[k]>, er = <a_r[k], Wh[k]>
//   alpha        = softmax of e over d's in-edges and a self loop d -> d, per head k
//   out_d[k]     = Σ dropout(alpha)(s -> d, k) Wh_s[k], heads concatenated or averaged.
// The self loop is an edge of its own, also where d lists itself, as GATConv adds it.
//
// Nothing is kept per edge, so a hub's in-edges cost no memory: a destination's softmax takes
// two passes over its edges (the largest score, then the terms exp(e - max) summed with what
// they weigh, divided by their sum at the end). The backward pass (on an undirected graph:
// every edge's reverse stored) is two gathers:
// - by destination, [Wh | el] gathered: each destination recomputes its attention and writes
//   its statistics, per head: er, the log of the softmax's denominator (lse), c = Σ alpha ·
//   dL/dalpha over its edges, and dL/der;
// - by source, [dL/dagg | statistics] gathered: each source s walks its edges s -> d as the
//   reverses of its in-edges, recomputes alpha(s -> d) = exp(e - lse_d), and sums dL/dWh_s
//   (the weighted sum's transpose, and the scores' terms el and er) and dL/del_s.
// On a directed graph a source's out-edges are not stored, so the backward pass is one pass by
// destination that scatters: each destination computes its statistics and then adds every
// in-edge's terms to its source's row of a second N-row matrix, [dL/dWh | dL/del], which a
// pass in row order finishes (ScatteredSourceRows). It holds two N-row
// matrices where the gathers hold one, and runs its scatter's threads over columns rather than
// rows.
//
// Row layouts (H heads of F features, W = H F):
//   transformed: [Wh (W) | el (H)]                 — the forward's and the first pass's gather
//   statistics:  [er | lse | c | dL/der] (4 H)     — the first pass's output, in row order
//   gradient:    [dL/dagg (W) | statistics (4 H)]  — the second pass's gather
//   source:      [dL/dWh (W) | dL/del (H) | dL/der (H)] — the second pass's output
//   scattered:   [dL/dWh (W) | dL/del (H)]          — the directed pass's sums
//
// Attention dropout keeps edge s -> d in head k when 16 bits of a hash of (seed, d, s, k) are at
// least round(p · 65536), scaling it by 1 / (1 - p): a function of the edge, which both passes
// draw again; a self loop's s is N (no node), and k is the head's index in its layer.
//
// A layer too wide to gather whole is run in groups of heads (Heads), one gather per group.
//
// Determinism: each output row is one thread's, its sums in edge order; in the scatter each
// column of the sums is one thread's, summed in (block, destination, edge) order.
#pragma once

#include <cstdint>

#include "fullgraph/propagation.h"
#include "nn/matrix.h"

namespace strata {

struct GraphAttention {
  size_t heads = 1;
  size_t per_head = 1;
  bool concat = true;              // hidden layers concatenate their heads; the last averages them
  MatrixSpan<const float> attn_l;  // heads × per_head, scores the source
  MatrixSpan<const float> attn_r;  // heads × per_head, scores the destination
  double dropout = 0;              // attention dropout, when training
  uint64_t seed = 0;               // its masks'
  // Of a group of a layer's heads (Heads()): its first head's index and the layer's heads, which
  // key the dropout masks, so that a head draws the same masks in any group.
  size_t first_head = 0;
  size_t layer_heads = 0;  // 0: `heads`

  size_t LayerHeads() const { return layer_heads > 0 ? layer_heads : heads; }
  size_t width() const { return heads * per_head; }
  size_t out_dim() const { return concat ? width() : per_head; }
  size_t transformed_width() const { return width() + heads; }
  size_t statistics_width() const { return 4 * heads; }
  size_t gradient_width() const { return width() + statistics_width(); }
  size_t source_width() const { return width() + 2 * heads; }
  // The layer's heads [first, first + count) as an attention of their own, with row layouts of
  // their own (the layouts above for `count` heads): each head's output, statistics and
  // gradients depend on that head's columns only, so the groups of a layer compute what the
  // whole layer does, head by head.
  GraphAttention Heads(size_t first, size_t count) const;
};

// Rows of a group of heads' transformed rows (attention.Heads(first, count)'s layout) from the
// layer's.
void GroupRows(const GraphAttention& attention, size_t first, size_t count,
               MatrixSpan<const float> transformed, MatrixSpan<float> group);

// The el columns of transformed rows from their Wh columns.
void SourceScores(const GraphAttention& attention, MatrixSpan<float> transformed, unsigned threads);

// out.row(d - begin) = the block destination d's attention output (no bias); `transformed` has
// a row per node.
void AttendBlock(const AdjacencyBlock& block, const GraphAttention& attention,
                 MatrixSpan<const float> transformed, MatrixSpan<float> out, unsigned threads);

// The first backward pass over the block's destinations: statistics.row(d - begin) from
// grad_out.row(d - begin) = dL/d(out_d), `transformed` gathered.
void AttentionStatistics(const AdjacencyBlock& block, const GraphAttention& attention,
                         MatrixSpan<const float> transformed, MatrixSpan<const float> grad_out,
                         MatrixSpan<float> statistics, unsigned threads);

// Gradient rows from rows of dL/d(out) and of statistics (the heads' mean spreads its gradient
// over the heads).
void GradientRows(const GraphAttention& attention, MatrixSpan<const float> grad_out,
                  MatrixSpan<const float> statistics, MatrixSpan<float> gradient);

// The second backward pass over the block's rows as sources, on an undirected graph:
// source.row(s - begin) from `gradient` (a row per node, gathered) and transformed.row(s -
// begin).
void AttentionSourceGradients(const AdjacencyBlock& block, const GraphAttention& attention,
                              MatrixSpan<const float> gradient, MatrixSpan<const float> transformed,
                              MatrixSpan<float> source, unsigned threads);

// The backward pass on any graph (directed too) in one pass over the block's destinations,
// `transformed` gathered: statistics.row(d - begin) as AttentionStatistics writes it, and each
// in-edge s -> d's terms added to scattered.row(s) = [dL/dWh_s (W) | dL/del_s (H)], which holds
// a row per node and starts at zero. Threads split the columns (by head, and a head by its
// features when heads are fewer than threads), so each sum runs in edge order whatever the
// threads.
void AttentionScatter(const AdjacencyBlock& block, const GraphAttention& attention,
                      MatrixSpan<const float> transformed, MatrixSpan<const float> grad_out,
                      MatrixSpan<float> statistics, MatrixSpan<float> scattered, unsigned threads);

// Source rows (AttentionSourceGradients' layout) from finished rows of the scatter and of the
// statistics.
void ScatteredSourceRows(const GraphAttention& attention, MatrixSpan<const float> scattered,
                         MatrixSpan<const float> statistics, MatrixSpan<float> source);

// attn_l_grad (+)= Σ_s dL/del_s[k] Wh_s[k] and attn_r_grad likewise with dL/der, over rows of
// transformed and source; overwrites when `accumulate` is false.
void AttentionVectorGradients(const GraphAttention& attention, MatrixSpan<const float> transformed,
                              MatrixSpan<const float> source, MatrixSpan<float> attn_l_grad,
                              MatrixSpan<float> attn_r_grad, bool accumulate);

}  // namespace strata
