// GATConv (Veličković et al.), multi-head, as DGL computes it (eq. 2.4 / 2.6 of T. Huang,
// "Efficient Systems for Large-Scale Graph Representation Learning", MIT PhD thesis, 2025):
//   Wh_v      = W^T h_v, split into H heads of F features
//   e(s->d,k) = LeakyReLU_0.2(<a_l[k], Wh_s[k]> + <a_r[k], Wh_d[k]>)     (SDDMM, ⊕)
//   alpha     = softmax of e over the incoming edges of d, per head       (edge softmax)
//   out_d[k]  = sum over s -> d of dropout(alpha)(s->d,k) * Wh_s[k]        (weighted SpMM)
// then the heads are concatenated (H*F outputs, hidden layers) or averaged (F outputs, the
// last layer), plus a bias.
//
// Self loops: every destination also attends to itself. The layer appends an edge d -> d
// (d is the same local id among the sources, since destinations are the first sources) to
// each destination's sampled edges before the attention, so a node without sampled
// neighbours still has one edge and a well-defined softmax. A block that already holds d
// among d's sources gets a second, separate edge, as DGL's add_self_loop does.
//
// Transform first: attention needs Wh for every source, so the GEMM runs over all num_src
// rows before aggregation (unlike SAGEConv and GCNConv).
//
// Attention dropout (training only) drops normalised attention weights with probability p,
// the mask drawn from LayerInput::seed.
//
// Parameters: "weight" (in x H*F, Glorot uniform, gain sqrt(2)), "attn_l" and "attn_r" (H x
// F, Glorot uniform with DGL's fans, gain sqrt(2)), "bias" (1 x out_dim, 0, unless disabled).
#pragma once

#include <cstdint>

#include "nn/layer.h"
#include "nn/layer_bias.h"

namespace strata {

// Initialises a GAT layer's parameters from its seed (the mini-batch layer's and the full-graph
// runner's, so that both paths start from one model): weight (in × H*F) and the H × F attention
// vectors.
template <typename T>
void InitGatParameters(MatrixSpan<T> weight, MatrixSpan<T> attn_l, MatrixSpan<T> attn_r,
                       uint64_t seed);

struct GatOptions {
  size_t heads = 1;
  bool concat_heads = true;      // false: average the heads (the last layer)
  double attention_dropout = 0;  // in [0, 1)
};

template <typename T>
class BasicGatConv final : public BasicLayer<T> {
 public:
  // out_per_head is F; out_dim() is heads * F when concatenating, F when averaging.
  BasicGatConv(size_t in_dim, size_t out_per_head, const GatOptions& options, uint64_t seed,
               bool bias = true);

  void Forward(const LayerInput<T>& input, BasicMatrix<T>& out) override;
  void Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) override;
  // Gathered: a source's Wh (H*F values) and its H source scores <a_l, Wh>; a destination's own
  // row serves its score and its self loop.
  size_t gathered_width() const override { return options_.heads * per_head_ + options_.heads; }
  void TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const override;
  void Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered, MatrixSpan<const T> self,
                 std::span<const T> gcn_norm, MatrixSpan<T> out) override;
  std::vector<BasicParameter<T>> Parameters(const std::string& prefix) override;
  size_t in_dim() const override { return in_dim_; }
  size_t out_dim() const override {
    return options_.concat_heads ? options_.heads * per_head_ : per_head_;
  }
  size_t AllocatedBytes() const override {
    return CapacityBytes<T>({&weight_, &weight_grad_, &attn_l_, &attn_l_grad_, &attn_r_,
                             &attn_r_grad_, &wh_, &logits_, &alpha_, &alpha_drop_, &el_, &er_,
                             &aggregate_, &grad_aggregate_, &grad_edges_, &grad_wh_, &grad_el_,
                             &grad_er_}) +
           bias_.AllocatedBytes() + loops_.allocated_bytes() + csc_.allocated_bytes();
  }
  // AllocatedBytes' most after Forward and Backward on blocks within `shape` (self loops added).
  static uint64_t BytesBound(size_t in, size_t out_per_head, const GatOptions& options, bool bias,
                             const BlockShape& shape) {
    const uint64_t heads = options.heads;
    const uint64_t width = heads * out_per_head;
    const uint64_t out = options.concat_heads ? width : out_per_head;
    const uint64_t parameters = 2 * (in * width + 2 * width + (bias ? out : 0)) * sizeof(T);
    const uint64_t edges = shape.edges + shape.dst;
    const uint64_t saved =
        (2 * shape.src * (width + heads) + 2 * shape.dst * (width + heads) + 4 * edges * heads) *
        sizeof(T);
    const uint64_t lists =
        (shape.src + 1 + VectorBytesBound(shape.dst + 1 + 3 * edges)) * sizeof(uint32_t);
    return parameters + MatrixBytesBound(saved) + lists;
  }

 private:
  // wh = in W and el = <a_l, wh> per head: Forward's first half.
  void Transform(MatrixSpan<const T> in, MatrixSpan<T> wh, MatrixSpan<T> el) const;
  // Forward's half after the transform, over the self-looped graph `g`: the attention from the
  // sources' Wh and scores el (graph.num_src rows each), its dropout when training, the weighted
  // sum and the heads' concatenation or mean, + the bias, into `out` (num_dst x out_dim()).
  // `edge_weights` (empty, or one per edge of the block without its self loops: LABOR's inverse
  // inclusion probabilities) add log(weight) to the edge's logits, so the softmax over the
  // sampled edges is the self-normalised importance estimate of the full neighbourhood's.
  void Attend(const BlockCsr& g, std::span<const float> edge_weights, MatrixSpan<const T> wh,
              MatrixSpan<const T> el, bool training, uint64_t seed, MatrixSpan<T> out);

  size_t in_dim_;
  size_t per_head_;
  GatOptions options_;
  BasicMatrix<T> weight_;  // in x H*F
  BasicMatrix<T> weight_grad_;
  BasicMatrix<T> attn_l_;  // H x F, scores the source
  BasicMatrix<T> attn_l_grad_;
  BasicMatrix<T> attn_r_;  // H x F, scores the destination
  BasicMatrix<T> attn_r_grad_;
  LayerBias<T> bias_;

  // Saved by Forward for Backward.
  SelfLoopCsr loops_;
  MatrixSpan<const T> features_;
  BasicMatrix<T> wh_;          // num_src x H*F
  BasicMatrix<T> logits_;      // edges x H, before LeakyReLU
  BasicMatrix<T> alpha_;       // edges x H, after the edge softmax
  BasicMatrix<T> alpha_drop_;  // edges x H, after attention dropout (when it ran)
  bool dropped_ = false;
  uint64_t dropout_seed_ = 0;
  // Forward and backward scratch.
  BasicMatrix<T> el_;         // num_src x H
  BasicMatrix<T> er_;         // num_dst x H
  BasicMatrix<T> aggregate_;  // num_dst x H*F, when averaging heads
  BasicMatrix<T> grad_aggregate_;
  BasicMatrix<T> grad_edges_;  // edges x H
  BasicMatrix<T> grad_wh_;     // num_src x H*F
  BasicMatrix<T> grad_el_;
  BasicMatrix<T> grad_er_;
  BlockCsc csc_;
};

using GatConv = BasicGatConv<float>;

}  // namespace strata
