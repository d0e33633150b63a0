// SAGEConv with the mean aggregator (GraphSAGE; eq. 2.3 / 2.5 of T. Huang, "Efficient
// Systems for Large-Scale Graph Representation Learning", MIT PhD thesis, 2025):
//   h'_d = W_self^T h_d + W_neigh^T mean_{s in N(d)} h_s + b
// with separate self and neighbour weights; a destination without neighbours aggregates 0.
//
// Aggregate first, then transform: a sampled block has far more sources than destinations,
// so averaging the in_dim-wide source rows down to num_dst rows before the GEMM costs
// E*in_dim + num_dst*in_dim*out_dim, against num_src*in_dim*out_dim for transforming every
// source first. The self rows and the aggregate sit side by side in one num_dst x 2*in_dim
// matrix [h_d | mean], and W_self, W_neigh are the two halves of one 2*in_dim x out_dim
// weight, so forward is one GEMM (K = 2*in_dim) and the weight gradient is another.
//
// Parameters: "w_self" (in x out), "w_neigh" (in x out), "bias" (1 x out, unless disabled).
// Glorot uniform with gain sqrt(2) (DGL's choice for SAGEConv), bias 0.
#pragma once

#include <cstdint>

#include "nn/layer.h"
#include "nn/layer_bias.h"

namespace strata {

template <typename T>
class BasicSageConv final : public BasicLayer<T> {
 public:
  BasicSageConv(size_t in_dim, size_t out_dim, uint64_t seed, bool bias = true);

  void Forward(const LayerInput<T>& input, BasicMatrix<T>& out) override;
  void Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) override;
  std::vector<BasicParameter<T>> Parameters(const std::string& prefix) override;
  size_t in_dim() const override { return in_dim_; }
  size_t out_dim() const override { return out_dim_; }
  size_t AllocatedBytes() const override {
    return CapacityBytes<T>({&weight_, &weight_grad_, &self_and_mean_, &grad_self_and_mean_}) +
           bias_.AllocatedBytes() + csc_.allocated_bytes();
  }

 private:
  size_t in_dim_;
  size_t out_dim_;
  BasicMatrix<T> weight_;  // rows [0, in) are W_self, rows [in, 2 in) W_neigh
  BasicMatrix<T> weight_grad_;
  LayerBias<T> bias_;

  // Saved by Forward for Backward.
  BlockCsr graph_;
  BasicMatrix<T> self_and_mean_;  // num_dst x 2 in: [h_d | mean of neighbours]
  // Backward scratch.
  BasicMatrix<T> grad_self_and_mean_;
  BlockCsc csc_;
};

using SageConv = BasicSageConv<float>;

}  // namespace strata
