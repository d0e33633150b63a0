#include "fullgraph/input_products.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/gemm.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {
namespace {

STRATA_NN_CLONES void CsrRowsTimes(const InputGroup& g, MatrixSpan<const float> weight,
                                   MatrixSpan<float> out, uint64_t begin, uint64_t end) {
  const uint64_t base = g.indptr[0];
  for (uint64_t i = begin; i < end; ++i) {
    float* o = out.row(i);
    ZeroRow(o, out.cols());
    for (uint64_t k = g.indptr[i] - base; k < g.indptr[i + 1] - base; ++k) {
      AxpyRow(o, g.values[k], weight.row(g.columns[k]), out.cols());
    }
    if (!g.row_scale.empty()) ScaleRow(o, g.row_scale[i], out.cols());
  }
}

// The tile's part of weight_grad += groupᵀ · D grad: the terms of the stored values whose columns
// are its rows. `scaled` holds a row's scaled columns, so grad is only read.
STRATA_NN_CLONES void CsrRowsTransposedTimes(const InputGroup& g, MatrixSpan<const float> grad,
                                             MatrixSpan<float> weight_grad, const ScatterTile& tile,
                                             float* scaled) {
  const uint64_t base = g.indptr[0];
  const size_t c0 = tile.col_begin, f = tile.cols();
  for (uint64_t i = 0; i < g.rows; ++i) {
    const float* d = grad.row(i) + c0;
    if (!g.row_scale.empty()) {
      ScaledCopyRow(scaled, g.row_scale[i], d, f);
      d = scaled;
    }
    for (uint64_t k = g.indptr[i] - base; k < g.indptr[i + 1] - base; ++k) {
      if (tile.HoldsRow(g.columns[k])) {
        AxpyRow(weight_grad.row(g.columns[k]) + c0, g.values[k], d, f);
      }
    }
  }
}

// An element of a row's L1 norm in ForRows' units (about a multiply-add each): a dependent
// double add. Weighed as one, a 128-row sparse group's norms (~40 nonzeros a row, ~3 µs) ran
// on one thread while the other waited, once per group in every pass over the features.
constexpr uint64_t kNormWork = 16;

// Dense rows' scale, after or before their GEMM.
void ScaleRows(const InputGroup& group, MatrixSpan<float> m, unsigned threads) {
  if (group.row_scale.empty()) return;
  ForRows(threads, m.rows(), m.cols(), [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) ScaleRow(m.row(i), group.row_scale[i], m.cols());
  });
}

}  // namespace

InputGroup InputGroup::Rows(uint64_t begin, uint64_t end) const {
  InputGroup part = *this;
  part.first = first + begin;
  part.rows = end - begin;
  if (!row_scale.empty()) part.row_scale = row_scale.subspan(begin, end - begin);
  if (sparse()) {
    part.indptr = indptr.subspan(begin, end - begin + 1);
    part.columns = columns + (indptr[begin] - indptr[0]);
    part.values = values + (indptr[begin] - indptr[0]);
  } else {
    part.dense = dense.RowRange(begin, end - begin);
  }
  return part;
}

void InverseRowNorms(const InputGroup& group, std::span<float> scale, unsigned threads) {
  const uint64_t row_elements = group.sparse() ? (group.indptr[group.rows] - group.indptr[0]) /
                                                     std::max<uint64_t>(group.rows, 1)
                                               : group.dense.cols();
  ForRows(threads, group.rows, (row_elements + 1) * kNormWork, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      double l1 = 0;
      if (group.sparse()) {
        for (uint64_t k = group.indptr[i]; k < group.indptr[i + 1]; ++k) {
          l1 += std::abs(group.values[k - group.indptr[0]]);
        }
      } else {
        for (size_t j = 0; j < group.dense.cols(); ++j) l1 += std::abs(group.dense(i, j));
      }
      scale[i] = l1 > 0 ? static_cast<float>(1 / l1) : 1.0f;
    }
  });
}

void InputTimes(const InputGroup& group, MatrixSpan<const float> weight, MatrixSpan<float> out,
                unsigned threads) {
  if (out.rows() != group.rows || out.cols() != weight.cols()) {
    throw Error::Internal("InputTimes: shapes do not match");
  }
  if (!group.sparse()) {
    Gemm<float>(Trans::kNo, Trans::kNo, 1, group.dense, weight, 0, out, threads);
    ScaleRows(group, out, threads);
    return;
  }
  const uint64_t nnz = group.indptr[group.rows] - group.indptr[0];
  ForRows(threads, group.rows, (nnz / std::max<uint64_t>(group.rows, 1) + 1) * out.cols(),
          [&](uint64_t begin, uint64_t end) { CsrRowsTimes(group, weight, out, begin, end); });
}

void InputTransposedTimes(const InputGroup& group, MatrixSpan<float> grad,
                          MatrixSpan<float> weight_grad, bool accumulate, unsigned threads) {
  if (grad.rows() != group.rows || grad.cols() != weight_grad.cols()) {
    throw Error::Internal("InputTransposedTimes: shapes do not match");
  }
  if (!group.sparse()) {
    ScaleRows(group, grad, threads);
    Gemm<float>(Trans::kYes, Trans::kNo, 1, group.dense, grad, accumulate ? 1.0f : 0.0f,
                weight_grad, threads);
    return;
  }
  if (!accumulate) {
    for (size_t r = 0; r < weight_grad.rows(); ++r) ZeroRow(weight_grad.row(r), weight_grad.cols());
  }
  const uint64_t nnz = group.indptr[group.rows] - group.indptr[0];
  const unsigned parts = PartsFor(threads, nnz * grad.cols());
  ForScatterTiles(parts, weight_grad.rows(), grad.cols(), [&](const ScatterTile& tile) {
    std::vector<float> scaled(group.row_scale.empty() ? 0 : tile.cols());
    CsrRowsTransposedTimes(group, grad, weight_grad, tile, scaled.data());
  });
}

}  // namespace strata
