#include "fullgraph/propagation.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

// Neighbour rows are scattered over the whole matrix, so each edge's row is a cache miss and
// the gather runs as fast as misses overlap: the row some edges ahead is prefetched, so that
// about kLinesInFlight cache lines are on their way whatever the row's width (narrow rows, as
// a column slice's, look further ahead). On a 1M-node graph, 2 threads, 64 columns ran 1.8×
// and 8 columns 3× faster 32 and 64 edges ahead than 8 ahead.
constexpr uint64_t kLinesInFlight = 128;
constexpr uint64_t kMinPrefetchEdges = 16;
constexpr uint64_t kMaxPrefetchEdges = 64;

}  // namespace

uint64_t PrefetchDistance(size_t cols) {
  const uint64_t lines = std::max<uint64_t>(1, (cols * sizeof(float) + 63) / 64);
  return std::clamp(kLinesInFlight / lines, kMinPrefetchEdges, kMaxPrefetchEdges);
}

namespace {

void CheckShapes(const AdjacencyBlock& block, const PropagationWeights& w, size_t nodes,
                 size_t block_rows, size_t cols_a, size_t cols_b) {
  const size_t n = block.nodes;
  auto fits = [n](std::span<const float> weights) {
    return weights.empty() || weights.size() == n;
  };
  if (!fits(w.destination) || !fits(w.source) || nodes != n ||
      block_rows != block.rows.end - block.rows.begin || cols_a != cols_b || block.rows.end > n ||
      !block.indptr.Covers(block.rows.begin, block.rows.end)) {
    throw Error::Internal("graph propagation: shapes do not match the block");
  }
}

// A weight of node v, 1 where there are none.
inline float WeightOf(std::span<const float> weights, uint64_t v) {
  return weights.empty() ? 1.0f : weights[v];
}

// kSourceWeights: whether w.source is non-empty. Without them a term is in_j itself, which
// 1 · in_j equals, so either form sums the same numbers; the form without skips a load per edge.
// kCols: the rows' width where it is fixed when compiled (0: in.cols()), so that a row's sums
// stay in registers across its edges rather than in `out`, loaded and stored at each edge; the
// same operations in the same order either way. (Single-threaded on a random 1M-node, 10M-edge
// graph, without source weights: 8 columns 160 against 110 ms, 16 140 against 125, 64 434
// against 414.)
template <bool kSourceWeights, size_t kCols>
STRATA_NN_CLONES void PropagateRows(const AdjacencyBlock& b, const PropagationWeights& w,
                                    MatrixSpan<const float> in, MatrixSpan<float> out,
                                    uint64_t begin, uint64_t end) {
  const size_t f = kCols > 0 ? kCols : in.cols();
  const uint64_t first_edge = b.indptr[b.rows.begin];
  const uint64_t last_edge = b.indptr[end];
  auto neighbour = [&](uint64_t e) {
    return LoadNodeId(b.neighbours + (e - first_edge) * b.id_bytes, b.id_bytes);
  };
  const uint64_t ahead = PrefetchDistance(f);
  float row_sums[kCols > 0 ? kCols : 1];
  for (uint64_t i = begin; i < end; ++i) {
    float* o = out.row(i - b.rows.begin);
    float* sums = kCols > 0 ? row_sums : o;
    if (!w.self_loop) {
      ZeroRow(sums, f);
    } else if (kSourceWeights) {
      ScaledCopyRow(sums, w.source[i], in.row(i), f);
    } else {
      InlineCopyRow(sums, in.row(i), f);
    }
    for (uint64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
      if (e + ahead < last_edge) {
        const uint64_t later = neighbour(e + ahead);
        PrefetchRow(in.row(later), f);
        if (kSourceWeights) __builtin_prefetch(&w.source[later]);
      }
      const uint64_t j = neighbour(e);
      if (kSourceWeights) {
        AxpyRow(sums, w.source[j], in.row(j), f);
      } else {
        AddRow(sums, in.row(j), f);
      }
    }
    if (!w.destination.empty()) ScaleRow(sums, w.destination[i], f);
    if (kCols > 0) InlineCopyRow(o, sums, f);
  }
}

// PropagateRows for rows [begin, end), at the widths a sliced or unsliced GCN or SAGE usually
// gathers fixed when compiled.
void PropagateRange(const AdjacencyBlock& b, const PropagationWeights& w,
                    MatrixSpan<const float> in, MatrixSpan<float> out, uint64_t begin,
                    uint64_t end) {
  if (!w.source.empty()) return PropagateRows<true, 0>(b, w, in, out, begin, end);
  switch (in.cols()) {
    case 8:
      return PropagateRows<false, 8>(b, w, in, out, begin, end);
    case 16:
      return PropagateRows<false, 16>(b, w, in, out, begin, end);
    case 32:
      return PropagateRows<false, 32>(b, w, in, out, begin, end);
    case 48:
      return PropagateRows<false, 48>(b, w, in, out, begin, end);
    case 64:
      return PropagateRows<false, 64>(b, w, in, out, begin, end);
    default:
      return PropagateRows<false, 0>(b, w, in, out, begin, end);
  }
}

STRATA_NN_CLONES void ScaleRowRange(std::span<const float> source, MatrixSpan<float> in,
                                    uint64_t begin, uint64_t end) {
  for (uint64_t j = begin; j < end; ++j) ScaleRow(in.row(j), source[j], in.cols());
}

// The tile's part of every block row's scatter: the terms that land in its rows, its columns.
STRATA_NN_CLONES void ScatterTileOf(const AdjacencyBlock& b, const PropagationWeights& w,
                                    MatrixSpan<const float> grad_out, MatrixSpan<float> grad_in,
                                    const ScatterTile& tile, float* scaled) {
  const size_t c0 = tile.col_begin, f = tile.cols();
  const uint64_t first_edge = b.indptr[b.rows.begin];
  for (uint64_t i = b.rows.begin; i < b.rows.end; ++i) {
    ScaledCopyRow(scaled, WeightOf(w.destination, i), grad_out.row(i - b.rows.begin) + c0, f);
    if (w.self_loop && tile.HoldsRow(i)) {
      AxpyRow(grad_in.row(i) + c0, WeightOf(w.source, i), scaled, f);
    }
    for (uint64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
      const uint64_t j = LoadNodeId(b.neighbours + (e - first_edge) * b.id_bytes, b.id_bytes);
      if (tile.HoldsRow(j)) AxpyRow(grad_in.row(j) + c0, WeightOf(w.source, j), scaled, f);
    }
  }
}

}  // namespace

void GcnNormalisation(std::span<const uint64_t> indptr, std::span<float> norm) {
  for (uint64_t v = 0; v < norm.size(); ++v) {
    norm[v] =
        static_cast<float>(1.0 / std::sqrt(static_cast<double>(indptr[v + 1] - indptr[v]) + 1));
  }
}

void InverseInDegrees(std::span<const uint64_t> indptr, std::span<float> inv_degree) {
  for (uint64_t v = 0; v < inv_degree.size(); ++v) {
    const uint64_t degree = indptr[v + 1] - indptr[v];
    inv_degree[v] = degree == 0 ? 0.0f : static_cast<float>(1.0 / static_cast<double>(degree));
  }
}

void Propagate(const AdjacencyBlock& block, const PropagationWeights& weights,
               MatrixSpan<const float> in, MatrixSpan<float> out, unsigned threads) {
  CheckShapes(block, weights, in.rows(), out.rows(), in.cols(), out.cols());
  ForBlockRanges(block, threads, in.cols(), [&](uint64_t begin, uint64_t end) {
    PropagateRange(block, weights, in, out, begin, end);
  });
}

void ScaleBySource(std::span<const float> source, MatrixSpan<float> in, unsigned threads) {
  if (source.empty()) return;
  if (source.size() != in.rows()) {
    throw Error::Internal("ScaleBySource: a weight per row is needed");
  }
  ForRows(threads, in.rows(), in.cols(),
          [&](uint64_t begin, uint64_t end) { ScaleRowRange(source, in, begin, end); });
}

void PropagateTransposed(const AdjacencyBlock& block, const PropagationWeights& weights,
                         MatrixSpan<const float> grad_out, MatrixSpan<float> grad_in,
                         unsigned threads) {
  CheckShapes(block, weights, grad_in.rows(), grad_out.rows(), grad_in.cols(), grad_out.cols());
  const size_t cols = grad_out.cols();
  const uint64_t edges = block.indptr[block.rows.end] - block.indptr[block.rows.begin];
  const unsigned parts = PartsFor(threads, (edges + grad_out.rows()) * cols);
  ForScatterTiles(parts, grad_in.rows(), cols, [&](const ScatterTile& tile) {
    std::vector<float> scaled(tile.cols());
    ScatterTileOf(block, weights, grad_out, grad_in, tile, scaled.data());
  });
}

}  // namespace strata
