// LayerBias is a layer's optional learned bias: a 1 x width row added to every output row,
// zero-initialised, with its gradient (the column sums of the output gradient). Disabled, it
// holds nothing, adds nothing and lists no parameter, so a bias-free model (Kipf's GCN) has
// exactly the reference's parameters for the optimizer and the checkpoint.
#pragma once

#include <string>
#include <vector>

#include "nn/matrix.h"
#include "nn/parallel.h"
#include "nn/parameter.h"
#include "nn/row_broadcast.h"
#include "nn/row_ops.h"

namespace strata {

template <typename T>
class LayerBias {
 public:
  LayerBias(size_t width, bool enabled)
      : value_(enabled ? 1 : 0, width), grad_(enabled ? 1 : 0, width) {}

  bool enabled() const { return value_.rows() == 1; }
  // The bias value of column j (0 when disabled).
  T at(size_t j) const { return enabled() ? value_(0, j) : T{0}; }

  // out = bias in every row, so that a GEMM can accumulate onto it; returns the beta that GEMM
  // must use (1 onto the bias, 0 when there is none).
  T Broadcast(MatrixSpan<T> out, unsigned threads) {
    if (!enabled()) return T{0};
    BroadcastRows<T>(value_.values(), out, threads);
    return T{1};
  }
  // out += bias in every row; with first_column, out is the columns from there on.
  void AddTo(MatrixSpan<T> out, unsigned threads, size_t first_column = 0) const {
    if (!enabled()) return;
    const T* bias = value_.data() + first_column;
    ForRows(threads, out.rows(), out.cols(), [&](uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) AddRow(out.row(i), bias, out.cols());
    });
  }
  // The gradient from the output's gradient; with `accumulate`, from the rows after those of
  // the previous calls.
  void Backward(MatrixSpan<const T> grad_out, unsigned threads, bool accumulate = false) {
    if (enabled()) ColumnSums<T>(grad_out, grad_.values(), threads, accumulate);
  }
  void AppendParameter(const std::string& prefix, std::vector<BasicParameter<T>>& params) {
    if (enabled()) params.push_back({prefix + "bias", value_.span(), grad_.span()});
  }
  size_t AllocatedBytes() const { return CapacityBytes<T>({&value_, &grad_}); }

 private:
  BasicMatrix<T> value_;
  BasicMatrix<T> grad_;
};

}  // namespace strata
