#include "nn/linear.h"

#include <algorithm>
#include <string>

#include "nn/gemm.h"
#include "nn/init.h"
#include "strata/error.h"

namespace strata {

template <typename T>
BasicLinear<T>::BasicLinear(size_t in_dim, size_t out_dim, uint64_t seed, bool bias)
    : in_dim_(in_dim),
      out_dim_(out_dim),
      weight_(in_dim, out_dim),
      weight_grad_(in_dim, out_dim),
      bias_(out_dim, bias) {
  GlorotUniform(weight_.span(), in_dim, out_dim, seed);
}

template <typename T>
void BasicLinear<T>::Forward(const LayerInput<T>& input, BasicMatrix<T>& out) {
  const BlockCsr& g = input.graph;
  if (input.features.rows() != g.num_src || input.features.cols() != in_dim_ ||
      g.num_dst > g.num_src) {
    throw Error::Internal("Linear: input is " + std::to_string(input.features.rows()) + "x" +
                          std::to_string(input.features.cols()) + ", expected " +
                          std::to_string(g.num_src) + "x" + std::to_string(in_dim_));
  }
  input_ = input.features.RowRange(0, g.num_dst);
  num_src_ = g.num_src;
  out.Resize(g.num_dst, out_dim_);
  const T beta = bias_.Broadcast(out.span(), this->threads_);
  Gemm<T>(Trans::kNo, Trans::kNo, 1, input_, weight_.span(), beta, out.span(), this->threads_);
}

template <typename T>
void BasicLinear<T>::Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) {
  const unsigned threads = this->threads_;
  if (grad_out.rows() != input_.rows() || grad_out.cols() != out_dim_) {
    throw Error::Internal("Linear: output gradient has the wrong shape");
  }
  bias_.Backward(grad_out, threads);
  Gemm<T>(Trans::kYes, Trans::kNo, 1, input_, grad_out, 0, weight_grad_.span(), threads);
  if (grad_in == nullptr) return;
  grad_in->Resize(num_src_, in_dim_);
  MatrixSpan<T> grad = grad_in->span();
  Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_out, weight_.span(), 0, grad.RowRange(0, input_.rows()),
          threads);
  for (size_t i = input_.rows(); i < num_src_; ++i) std::fill_n(grad.row(i), in_dim_, T{0});
}

template <typename T>
void BasicLinear<T>::TransformSelf(MatrixSpan<const T> in, MatrixSpan<T> self) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, in, weight_.span(), 0, self, this->threads_);
}

template <typename T>
void BasicLinear<T>::Aggregate(const BlockCsr& /*graph*/, MatrixSpan<const T> /*gathered*/,
                               MatrixSpan<const T> self, std::span<const T> /*gcn_norm*/,
                               MatrixSpan<T> out) {
  for (size_t i = 0; i < out.rows(); ++i) std::copy_n(self.row(i), out_dim_, out.row(i));
  bias_.AddTo(out, this->threads_);
}

template <typename T>
std::vector<BasicParameter<T>> BasicLinear<T>::Parameters(const std::string& prefix) {
  std::vector<BasicParameter<T>> params = {
      {prefix + "weight", weight_.span(), weight_grad_.span()}};
  bias_.AppendParameter(prefix, params);
  return params;
}

template class BasicLinear<float>;
template class BasicLinear<double>;

}  // namespace strata
