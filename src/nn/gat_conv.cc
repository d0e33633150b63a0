#include "nn/gat_conv.h"

#include <cmath>
#include <string>

#include "common/random.h"
#include "nn/activations.h"
#include "nn/dropout.h"
#include "nn/edge_softmax.h"
#include "nn/gemm.h"
#include "nn/init.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "nn/sddmm.h"
#include "nn/spmm.h"
#include "strata/error.h"

namespace strata {

template <typename T>
void InitGatParameters(MatrixSpan<T> weight, MatrixSpan<T> attn_l, MatrixSpan<T> attn_r,
                       uint64_t seed) {
  const double gain = std::sqrt(2.0);
  const size_t width = weight.cols(), per_head = attn_l.cols();
  GlorotUniform(weight, weight.rows(), width, MixSeed(seed, 0), gain);
  // DGL's fans for its (1, H, F) attention tensors.
  GlorotUniform(attn_l, width, per_head, MixSeed(seed, 1), gain);
  GlorotUniform(attn_r, width, per_head, MixSeed(seed, 2), gain);
}

template <typename T>
BasicGatConv<T>::BasicGatConv(size_t in_dim, size_t out_per_head, const GatOptions& options,
                              uint64_t seed, bool bias)
    : in_dim_(in_dim),
      per_head_(out_per_head),
      options_(options),
      weight_(in_dim, options.heads * out_per_head),
      weight_grad_(in_dim, options.heads * out_per_head),
      attn_l_(options.heads, out_per_head),
      attn_l_grad_(options.heads, out_per_head),
      attn_r_(options.heads, out_per_head),
      attn_r_grad_(options.heads, out_per_head),
      bias_(options.concat_heads ? options.heads * out_per_head : out_per_head, bias) {
  if (options.heads == 0 || out_per_head == 0) {
    throw Error::Input("GAT needs at least one head of at least one feature");
  }
  if (!(options.attention_dropout >= 0 && options.attention_dropout < 1)) {
    throw Error::Input("attention dropout " + std::to_string(options.attention_dropout) +
                       " is outside [0, 1)");
  }
  InitGatParameters(weight_.span(), attn_l_.span(), attn_r_.span(), seed);
}

template <typename T>
void BasicGatConv<T>::Forward(const LayerInput<T>& input, BasicMatrix<T>& out) {
  CheckCsr(input.graph);
  const size_t ns = input.graph.num_src;
  const size_t nd = input.graph.num_dst;
  if (input.features.rows() != ns || input.features.cols() != in_dim_) {
    throw Error::Internal("GatConv: input is " + std::to_string(input.features.rows()) + "x" +
                          std::to_string(input.features.cols()) + ", expected " +
                          std::to_string(ns) + "x" + std::to_string(in_dim_));
  }
  const size_t heads = options_.heads;
  const size_t width = heads * per_head_;
  loops_.Build(input.graph);
  features_ = input.features;
  wh_.Resize(ns, width);
  el_.Resize(ns, heads);
  Transform(input.features, wh_.span(), el_.span());
  out.Resize(nd, out_dim());
  Attend(loops_.graph(), input.graph.weights, wh_.span(), el_.span(), input.training, input.seed,
         out.span());
}

template <typename T>
void BasicGatConv<T>::Transform(MatrixSpan<const T> in, MatrixSpan<T> wh, MatrixSpan<T> el) const {
  Gemm<T>(Trans::kNo, Trans::kNo, 1, in, weight_.span(), 0, wh, this->threads_);
  HeadDots<T>(wh, attn_l_.span(), el, this->threads_);
}

template <typename T>
void BasicGatConv<T>::TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const {
  const size_t width = options_.heads * per_head_;
  Transform(in, gathered.Sub(0, 0, in.rows(), width),
            gathered.Sub(0, width, in.rows(), options_.heads));
}

template <typename T>
void BasicGatConv<T>::Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered,
                                MatrixSpan<const T> /*self*/, std::span<const T> /*gcn_norm*/,
                                MatrixSpan<T> out) {
  CheckCsr(graph);
  const size_t width = options_.heads * per_head_;
  loops_.Build(graph);
  Attend(loops_.graph(), graph.weights, gathered.Sub(0, 0, graph.num_src, width),
         gathered.Sub(0, width, graph.num_src, options_.heads), false, 0, out);
}

template <typename T>
void BasicGatConv<T>::Attend(const BlockCsr& g, std::span<const float> edge_weights,
                             MatrixSpan<const T> wh, MatrixSpan<const T> el, bool training,
                             uint64_t seed, MatrixSpan<T> out) {
  const unsigned threads = this->threads_;
  const size_t nd = g.num_dst;
  const size_t heads = options_.heads;
  const size_t width = heads * per_head_;
  er_.Resize(nd, heads);
  HeadDots<T>(wh.RowRange(0, nd), attn_r_.span(), er_.span(), threads);

  logits_.Resize(g.num_edges(), heads);
  SddmmAdd<T>(g, el, er_.span(), logits_.span(), threads);
  alpha_.Resize(g.num_edges(), heads);
  LeakyRelu<T>(logits_.span(), alpha_.span(), kLeakyReluSlope, threads);
  if (!edge_weights.empty()) {
    // Destination d's edges in `g` are its block edges, shifted by the d self loops before
    // them, then its own self loop (weight 1).
    for (uint32_t d = 0; d < nd; ++d) {
      for (uint32_t j = g.indptr[d]; j + 1 < g.indptr[d + 1]; ++j) {
        const T shift = static_cast<T>(std::log(static_cast<double>(edge_weights[j - d])));
        for (size_t h = 0; h < heads; ++h) alpha_(j, h) += shift;
      }
    }
  }
  EdgeSoftmax<T>(g, alpha_.span(), alpha_.span(), threads);

  dropped_ = training && options_.attention_dropout > 0;
  dropout_seed_ = seed;
  if (dropped_) {
    alpha_drop_.Resize(g.num_edges(), heads);
    Dropout<T>(alpha_.span(), alpha_drop_.span(), options_.attention_dropout, seed, threads);
  }
  MatrixSpan<const T> weights = dropped_ ? alpha_drop_.span() : alpha_.span();

  if (options_.concat_heads) {
    SpmmWeighted<T>(g, weights, wh, out, threads);
    bias_.AddTo(out, threads);
  } else {
    aggregate_.Resize(nd, width);
    SpmmWeighted<T>(g, weights, wh, aggregate_.span(), threads);
    const T inv_heads = T{1} / static_cast<T>(heads);
    for (size_t d = 0; d < nd; ++d) {
      const T* a = aggregate_.row(d);
      T* o = out.row(d);
      for (size_t j = 0; j < per_head_; ++j) {
        T sum{0};
        for (size_t h = 0; h < heads; ++h) sum += a[h * per_head_ + j];
        o[j] = sum * inv_heads + bias_.at(j);
      }
    }
  }
}

template <typename T>
void BasicGatConv<T>::Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) {
  const unsigned threads = this->threads_;
  const BlockCsr g = loops_.graph();
  const size_t ns = g.num_src;
  const size_t nd = g.num_dst;
  const size_t heads = options_.heads;
  const size_t f = per_head_;
  const size_t width = heads * f;
  if (grad_out.rows() != nd || grad_out.cols() != out_dim()) {
    throw Error::Internal("GatConv: output gradient has the wrong shape");
  }
  bias_.Backward(grad_out, threads);

  // Gradient of the per-head aggregate.
  MatrixSpan<const T> grad_agg = grad_out;
  if (!options_.concat_heads) {
    grad_aggregate_.Resize(nd, width);
    const T inv_heads = T{1} / static_cast<T>(heads);
    for (size_t d = 0; d < nd; ++d) {
      for (size_t h = 0; h < heads; ++h) {
        ScaledCopyRow(grad_aggregate_.row(d) + h * f, inv_heads, grad_out.row(d), f);
      }
    }
    grad_agg = grad_aggregate_.span();
  }
  MatrixSpan<const T> weights = dropped_ ? alpha_drop_.span() : alpha_.span();

  // Through the weighted SpMM: to the attention weights (SDDMM ⊙) and to Wh (transpose).
  grad_edges_.Resize(g.num_edges(), heads);
  SddmmDot<T>(g, grad_agg, wh_.span(), grad_edges_.span(), threads);
  csc_.Build(g);
  grad_wh_.Resize(ns, width);
  SpmmWeightedTransposed<T>(csc_, weights, grad_agg, grad_wh_.span(), false, threads);

  // Through dropout, the edge softmax and the LeakyReLU, in place.
  if (dropped_) {
    DropoutBackward<T>(grad_edges_.span(), grad_edges_.span(), options_.attention_dropout,
                       dropout_seed_, threads);
  }
  EdgeSoftmaxBackward<T>(g, alpha_.span(), grad_edges_.span(), grad_edges_.span(), threads);
  LeakyReluBackward<T>(logits_.span(), grad_edges_.span(), grad_edges_.span(), kLeakyReluSlope,
                       threads);

  // Through the SDDMM ⊕ to the per-node scores, then to a_l, a_r and Wh.
  grad_el_.Resize(ns, heads);
  SumEdgesBySource<T>(csc_, grad_edges_.span(), grad_el_.span(), threads);
  grad_er_.Resize(nd, heads);
  SumEdgesByDestination<T>(g, grad_edges_.span(), grad_er_.span(), threads);
  for (size_t h = 0; h < heads; ++h) {
    // attn_l_grad[h] = sum over sources s of grad_el(s, h) * Wh_s[h]: a 1 x ns by ns x F GEMM
    // with the score column as a strided 1-column matrix.
    MatrixSpan<const T> el_col(grad_el_.data() + h, ns, 1, heads);
    Gemm<T>(Trans::kYes, Trans::kNo, 1, el_col, wh_.span().Sub(0, h * f, ns, f), 0,
            attn_l_grad_.span().Sub(h, 0, 1, f));
    MatrixSpan<const T> er_col(grad_er_.data() + h, nd, 1, heads);
    Gemm<T>(Trans::kYes, Trans::kNo, 1, er_col, wh_.span().Sub(0, h * f, nd, f), 0,
            attn_r_grad_.span().Sub(h, 0, 1, f));
  }
  MatrixSpan<T> gwh = grad_wh_.span();
  ForRows(threads, ns, width, [&](uint64_t begin, uint64_t end) {
    for (uint64_t s = begin; s < end; ++s) {
      for (size_t h = 0; h < heads; ++h) {
        AxpyRow(gwh.row(s) + h * f, grad_el_(s, h), attn_l_.row(h), f);
        if (s < nd) AxpyRow(gwh.row(s) + h * f, grad_er_(s, h), attn_r_.row(h), f);
      }
    }
  });

  // Through the transform.
  Gemm<T>(Trans::kYes, Trans::kNo, 1, features_, grad_wh_.span(), 0, weight_grad_.span(), threads);
  if (grad_in != nullptr) {
    grad_in->Resize(ns, in_dim_);
    Gemm<T>(Trans::kNo, Trans::kYes, 1, grad_wh_.span(), weight_.span(), 0, grad_in->span(),
            threads);
  }
}

template <typename T>
std::vector<BasicParameter<T>> BasicGatConv<T>::Parameters(const std::string& prefix) {
  std::vector<BasicParameter<T>> params = {
      {prefix + "weight", weight_.span(), weight_grad_.span()},
      {prefix + "attn_l", attn_l_.span(), attn_l_grad_.span()},
      {prefix + "attn_r", attn_r_.span(), attn_r_grad_.span()},
  };
  bias_.AppendParameter(prefix, params);
  return params;
}

template void InitGatParameters<float>(MatrixSpan<float>, MatrixSpan<float>, MatrixSpan<float>,
                                       uint64_t);
template void InitGatParameters<double>(MatrixSpan<double>, MatrixSpan<double>, MatrixSpan<double>,
                                        uint64_t);
template class BasicGatConv<float>;
template class BasicGatConv<double>;

}  // namespace strata
