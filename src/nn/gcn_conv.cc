#include "nn/gcn_conv.h"

#include <string>

#include "nn/gemm.h"
#include "nn/init.h"
#include "nn/product_order.h"
#include "nn/spmm.h"
#include "strata/error.h"

namespace strata {

template <typename T>
void InitGcnWeight(MatrixSpan<T> weight, uint64_t seed) {
  GlorotUniform(weight, weight.rows(), weight.cols(), seed);
}

template <typename T>
BasicGcnConv<T>::BasicGcnConv(size_t in_dim, size_t out_dim, uint64_t seed, bool bias)
    : in_dim_(in_dim),
      out_dim_(out_dim),
      weight_(in_dim, out_dim),
      weight_grad_(in_dim, out_dim),
      bias_(out_dim, bias) {
  InitGcnWeight(weight_.span(), seed);
}

template <typename T>
void BasicGcnConv<T>::Forward(const LayerInput<T>& input, BasicMatrix<T>& out) {
  const BlockCsr& g = input.graph;
  CheckCsr(g);
  if (input.features.rows() != g.num_src || input.features.cols() != in_dim_) {
    throw Error::Internal("GcnConv: input is " + std::to_string(input.features.rows()) + "x" +
                          std::to_string(input.features.cols()) + ", expected " +
                          std::to_string(g.num_src) + "x" + std::to_string(in_dim_));
  }
  if (input.gcn_norm.size() < g.num_src) {
    throw Error::Internal("GcnConv: " + std::to_string(input.gcn_norm.size()) +
                          " normalisation values for " + std::to_string(g.num_src) + " sources");
  }
  graph_ = g;
  norm_ = input.gcn_norm.first(g.num_src);
  const unsigned threads = this->threads_;
  transform_first_ =
      MultiplyBeforeAggregating(g.num_edges() + g.num_dst, g.num_src, g.num_dst, in_dim_, out_dim_);
  out.Resize(g.num_dst, out_dim_);
  if (transform_first_) {
    input_ = input.features;
    transformed_.Resize(g.num_src, out_dim_);
    TransformSources(input.features, transformed_.span());
    Propagate(g, norm_, transformed_.span(), out.span());
    return;
  }
  aggregate_.Resize(g.num_dst, in_dim_);
  SpmmGcn<T>(g, norm_, input.features, aggregate_.span(), threads);
  const T beta = bias_.Broadcast(out.span(), threads);
  Gemm<T>(Trans::kNo, Trans::kNo, 1, aggregate_.span(), weight_.span(), beta, out.span(), threads);
}

template <typename T>
void BasicGcnConv<T>::TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, in, weight_.span(), 0, gathered, this->threads_);
}

template <typename T>
void BasicGcnConv<T>::Propagate(const BlockCsr& graph, std::span<const T> norm,
                                MatrixSpan<const T> transformed, MatrixSpan<T> out) const {
  SpmmGcn<T>(graph, norm, transformed, out, this->threads_);
  bias_.AddTo(out, this->threads_);
}

template <typename T>
void BasicGcnConv<T>::Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered,
                                MatrixSpan<const T> /*self*/, std::span<const T> gcn_norm,
                                MatrixSpan<T> out) {
  CheckCsr(graph);
  Propagate(graph, gcn_norm, gathered, out);
}

template <typename T>
void BasicGcnConv<T>::CombineAggregated(MatrixSpan<const T> /*self*/,
                                        MatrixSpan<const T> aggregated, MatrixSpan<T> out) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, aggregated, weight_.span(), 0, out, this->threads_);
  bias_.AddTo(out, this->threads_);
}

template <typename T>
void BasicGcnConv<T>::Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) {
  const unsigned threads = this->threads_;
  const BlockCsr& g = graph_;
  if (grad_out.rows() != g.num_dst || grad_out.cols() != out_dim_) {
    throw Error::Internal("GcnConv: output gradient has the wrong shape");
  }
  bias_.Backward(grad_out, threads);
  csc_.Build(g);
  if (transform_first_) {
    grad_transformed_.Resize(g.num_src, out_dim_);
    SpmmGcnTransposed<T>(csc_, norm_, grad_out, grad_transformed_.span(), false, threads);
    Gemm<T>(Trans::kYes, Trans::kNo, 1, input_, grad_transformed_.span(), 0, weight_grad_.span(),
            threads);
    if (grad_in == nullptr) return;
    grad_in->Resize(g.num_src, in_dim_);
    Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_transformed_.span(), weight_.span(), 0,
            grad_in->span(), threads);
    return;
  }
  Gemm<T>(Trans::kYes, Trans::kNo, 1, aggregate_.span(), grad_out, 0, weight_grad_.span(), threads);
  if (grad_in == nullptr) return;
  grad_aggregate_.Resize(g.num_dst, in_dim_);
  Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_out, weight_.span(), 0, grad_aggregate_.span(), threads);
  grad_in->Resize(g.num_src, in_dim_);
  SpmmGcnTransposed<T>(csc_, norm_, grad_aggregate_.span(), grad_in->span(), false, threads);
}

template <typename T>
std::vector<BasicParameter<T>> BasicGcnConv<T>::Parameters(const std::string& prefix) {
  std::vector<BasicParameter<T>> params = {
      {prefix + "weight", weight_.span(), weight_grad_.span()}};
  bias_.AppendParameter(prefix, params);
  return params;
}

template void InitGcnWeight<float>(MatrixSpan<float>, uint64_t);
template void InitGcnWeight<double>(MatrixSpan<double>, uint64_t);
template class BasicGcnConv<float>;
template class BasicGcnConv<double>;

}  // namespace strata
