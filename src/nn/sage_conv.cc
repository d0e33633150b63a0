#include "nn/sage_conv.h"

#include <cmath>
#include <string>

#include "common/random.h"
#include "nn/gemm.h"
#include "nn/init.h"
#include "nn/parallel.h"
#include "nn/product_order.h"
#include "nn/row_ops.h"
#include "nn/spmm.h"
#include "strata/error.h"

namespace strata {

template <typename T>
void InitSageWeight(MatrixSpan<T> weight, uint64_t seed) {
  const size_t in_dim = weight.rows() / 2, out_dim = weight.cols();
  const double gain = std::sqrt(2.0);
  GlorotUniform(weight.RowRange(0, in_dim), in_dim, out_dim, MixSeed(seed, 0), gain);
  GlorotUniform(weight.RowRange(in_dim, in_dim), in_dim, out_dim, MixSeed(seed, 1), gain);
}

template <typename T>
BasicSageConv<T>::BasicSageConv(size_t in_dim, size_t out_dim, uint64_t seed, bool bias)
    : in_dim_(in_dim),
      out_dim_(out_dim),
      weight_(2 * in_dim, out_dim),
      weight_grad_(2 * in_dim, out_dim),
      bias_(out_dim, bias) {
  InitSageWeight(weight_.span(), seed);
}

template <typename T>
void BasicSageConv<T>::Forward(const LayerInput<T>& input, BasicMatrix<T>& out) {
  const BlockCsr& g = input.graph;
  CheckCsr(g);
  if (input.features.rows() != g.num_src || input.features.cols() != in_dim_) {
    throw Error::Internal("SageConv: input is " + std::to_string(input.features.rows()) + "x" +
                          std::to_string(input.features.cols()) + ", expected " +
                          std::to_string(g.num_src) + "x" + std::to_string(in_dim_));
  }
  graph_ = g;
  const unsigned threads = this->threads_;
  transform_first_ =
      MultiplyBeforeAggregating(g.num_edges(), g.num_src, g.num_dst, in_dim_, out_dim_);
  if (transform_first_) {
    input_ = input.features;
    transformed_.Resize(g.num_src, out_dim_);
    Gemm<T>(Trans::kNo, Trans::kNo, 1, input.features, NeighbourWeight(), 0, transformed_.span(),
            threads);
    out.Resize(g.num_dst, out_dim_);
    Spmm<T>(g, Reduce::kMean, transformed_.span(), out.span(), threads);
    Gemm<T>(Trans::kNo, Trans::kNo, 1, input.features.RowRange(0, g.num_dst), SelfWeight(), 1,
            out.span(), threads);
    bias_.AddTo(out.span(), threads);
    return;
  }
  self_and_mean_.Resize(g.num_dst, 2 * in_dim_);
  MatrixSpan<T> cat = self_and_mean_.span();
  ForRows(threads, g.num_dst, in_dim_, [&](uint64_t begin, uint64_t end) {
    for (uint64_t d = begin; d < end; ++d) CopyRow(cat.row(d), input.features.row(d), in_dim_);
  });
  Spmm<T>(g, Reduce::kMean, input.features, cat.Sub(0, in_dim_, g.num_dst, in_dim_), threads);
  out.Resize(g.num_dst, out_dim_);
  const T beta = bias_.Broadcast(out.span(), threads);
  Gemm<T>(Trans::kNo, Trans::kNo, 1, self_and_mean_.span(), weight_.span(), beta, out.span(),
          threads);
}

template <typename T>
void BasicSageConv<T>::Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) {
  const unsigned threads = this->threads_;
  const BlockCsr& g = graph_;
  if (grad_out.rows() != g.num_dst || grad_out.cols() != out_dim_) {
    throw Error::Internal("SageConv: output gradient has the wrong shape");
  }
  if (transform_first_) {
    BackwardTransformedFirst(grad_out, grad_in);
    return;
  }
  Gemm<T>(Trans::kYes, Trans::kNo, 1, self_and_mean_.span(), grad_out, 0, weight_grad_.span(),
          threads);
  bias_.Backward(grad_out, threads);
  if (grad_in == nullptr) return;
  grad_self_and_mean_.Resize(g.num_dst, 2 * in_dim_);
  Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_out, weight_.span(), 0, grad_self_and_mean_.span(),
          threads);
  csc_.Build(g);
  grad_in->Resize(g.num_src, in_dim_);
  MatrixSpan<const T> grad_cat = grad_self_and_mean_.span();
  SpmmTransposed<T>(g, csc_, Reduce::kMean, grad_cat.Sub(0, in_dim_, g.num_dst, in_dim_),
                    grad_in->span(), false, threads);
  MatrixSpan<T> gi = grad_in->span();
  ForRows(threads, g.num_dst, in_dim_, [&](uint64_t begin, uint64_t end) {
    for (uint64_t d = begin; d < end; ++d) AddRow(gi.row(d), grad_cat.row(d), in_dim_);
  });
}

template <typename T>
void BasicSageConv<T>::BackwardTransformedFirst(MatrixSpan<const T> grad_out,
                                                BasicMatrix<T>* grad_in) {
  const unsigned threads = this->threads_;
  const BlockCsr& g = graph_;
  MatrixSpan<const T> dst_rows = input_.RowRange(0, g.num_dst);
  Gemm<T>(Trans::kYes, Trans::kNo, 1, dst_rows, grad_out, 0,
          weight_grad_.span().RowRange(0, in_dim_), threads);
  bias_.Backward(grad_out, threads);
  csc_.Build(g);
  grad_transformed_.Resize(g.num_src, out_dim_);
  SpmmTransposed<T>(g, csc_, Reduce::kMean, grad_out, grad_transformed_.span(), false, threads);
  Gemm<T>(Trans::kYes, Trans::kNo, 1, input_, grad_transformed_.span(), 0,
          weight_grad_.span().RowRange(in_dim_, in_dim_), threads);
  if (grad_in == nullptr) return;
  grad_in->Resize(g.num_src, in_dim_);
  Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_transformed_.span(), NeighbourWeight(), 0,
          grad_in->span(), threads);
  Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_out, SelfWeight(), 1,
          grad_in->span().RowRange(0, g.num_dst), threads);
}

template <typename T>
void BasicSageConv<T>::TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, in, NeighbourWeight(), 0, gathered, this->threads_);
}

template <typename T>
void BasicSageConv<T>::TransformSelf(MatrixSpan<const T> in, MatrixSpan<T> self) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, in, SelfWeight(), 0, self, this->threads_);
}

template <typename T>
void BasicSageConv<T>::Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered,
                                 MatrixSpan<const T> self, std::span<const T> /*gcn_norm*/,
                                 MatrixSpan<T> out) {
  CheckCsr(graph);
  const unsigned threads = this->threads_;
  Spmm<T>(graph, Reduce::kMean, gathered, out, threads);
  ForRows(threads, graph.num_dst, out_dim_, [&](uint64_t begin, uint64_t end) {
    for (uint64_t d = begin; d < end; ++d) AddRow(out.row(d), self.row(d), out_dim_);
  });
  bias_.AddTo(out, threads);
}

template <typename T>
void BasicSageConv<T>::CombineAggregated(MatrixSpan<const T> self, MatrixSpan<const T> aggregated,
                                         MatrixSpan<T> out) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, self, SelfWeight(), 0, out, this->threads_);
  Gemm<T>(Trans::kNo, Trans::kNo, 1, aggregated, NeighbourWeight(), 1, out, this->threads_);
  bias_.AddTo(out, this->threads_);
}

template <typename T>
std::vector<BasicParameter<T>> BasicSageConv<T>::Parameters(const std::string& prefix) {
  std::vector<BasicParameter<T>> params = {
      {prefix + "w_self", weight_.span().RowRange(0, in_dim_),
       weight_grad_.span().RowRange(0, in_dim_)},
      {prefix + "w_neigh", weight_.span().RowRange(in_dim_, in_dim_),
       weight_grad_.span().RowRange(in_dim_, in_dim_)},
  };
  bias_.AppendParameter(prefix, params);
  return params;
}

template void InitSageWeight<float>(MatrixSpan<float>, uint64_t);
template void InitSageWeight<double>(MatrixSpan<double>, uint64_t);
template class BasicSageConv<float>;
template class BasicSageConv<double>;

}  // namespace strata
