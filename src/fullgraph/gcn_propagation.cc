#include "fullgraph/gcn_propagation.h"

#include <cmath>
#include <vector>

#include "common/parallel.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

void CheckShapes(const AdjacencyBlock& block, size_t norm, size_t nodes, size_t block_rows,
                 size_t cols_a, size_t cols_b) {
  if (norm != block.indptr.size() - 1 || nodes != norm ||
      block_rows != block.rows.end - block.rows.begin || cols_a != cols_b ||
      block.rows.end > norm) {
    throw Error::Internal("GCN propagation: shapes do not match the block");
  }
}

// Neighbour rows are scattered over the whole matrix: the row this many edges ahead is
// prefetched.
constexpr uint64_t kPrefetchEdges = 8;

STRATA_NN_CLONES void PropagateRows(const AdjacencyBlock& b, const float* norm,
                                    MatrixSpan<const float> in, MatrixSpan<float> out,
                                    uint64_t begin, uint64_t end) {
  const size_t f = in.cols();
  const uint64_t first_edge = b.indptr[b.rows.begin];
  const uint64_t last_edge = b.indptr[end];
  auto neighbour = [&](uint64_t e) {
    return LoadNodeId(b.neighbours + (e - first_edge) * b.id_bytes, b.id_bytes);
  };
  for (uint64_t i = begin; i < end; ++i) {
    float* o = out.row(i - b.rows.begin);
    ScaledCopyRow(o, norm[i], in.row(i), f);
    for (uint64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
      if (e + kPrefetchEdges < last_edge) PrefetchRow(in.row(neighbour(e + kPrefetchEdges)), f);
      const uint64_t j = neighbour(e);
      AxpyRow(o, norm[j], in.row(j), f);
    }
    ScaleRow(o, norm[i], f);
  }
}

// Columns [c0, c1) of every block row's scatter.
STRATA_NN_CLONES void ScatterColumns(const AdjacencyBlock& b, const float* norm,
                                     MatrixSpan<const float> grad_out, MatrixSpan<float> grad_in,
                                     size_t c0, size_t c1, float* scaled) {
  const size_t f = c1 - c0;
  const uint64_t first_edge = b.indptr[b.rows.begin];
  for (uint64_t i = b.rows.begin; i < b.rows.end; ++i) {
    ScaledCopyRow(scaled, norm[i], grad_out.row(i - b.rows.begin) + c0, f);
    AxpyRow(grad_in.row(i) + c0, norm[i], scaled, f);
    for (uint64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
      const uint64_t j = LoadNodeId(b.neighbours + (e - first_edge) * b.id_bytes, b.id_bytes);
      AxpyRow(grad_in.row(j) + c0, norm[j], scaled, f);
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

void Propagate(const AdjacencyBlock& block, std::span<const float> norm, MatrixSpan<const float> in,
               MatrixSpan<float> out, unsigned threads) {
  CheckShapes(block, norm.size(), in.rows(), out.rows(), in.cols(), out.cols());
  const uint64_t rows = block.rows.end - block.rows.begin;
  const uint64_t edges = block.indptr[block.rows.end] - block.indptr[block.rows.begin];
  ForRows(threads, rows, (edges / std::max<uint64_t>(rows, 1) + 1) * in.cols(),
          [&](uint64_t begin, uint64_t end) {
            PropagateRows(block, norm.data(), in, out, block.rows.begin + begin,
                          block.rows.begin + end);
          });
}

void PropagateTransposed(const AdjacencyBlock& block, std::span<const float> norm,
                         MatrixSpan<const float> grad_out, MatrixSpan<float> grad_in,
                         unsigned threads) {
  CheckShapes(block, norm.size(), grad_in.rows(), grad_out.rows(), grad_in.cols(), grad_out.cols());
  const size_t cols = grad_out.cols();
  const uint64_t edges = block.indptr[block.rows.end] - block.indptr[block.rows.begin];
  const unsigned parts =
      (threads <= 1 || (edges + grad_out.rows()) * cols < kMinParallelWork) ? 1 : threads;
  ParallelFor(parts, cols, [&](uint64_t c0, uint64_t c1) {
    if (c0 == c1) return;
    std::vector<float> scaled(c1 - c0);
    ScatterColumns(block, norm.data(), grad_out, grad_in, c0, c1, scaled.data());
  });
}

}  // namespace strata
