// SAGEConv with the mean aggregator (GraphSAGE; eq. 2.3 / 2.5 of T. Huang, "Efficient
// Systems for Large-Scale Graph Representation Learning", MIT PhD thesis, 2025):
//   h'_d = W_self^T h_d + W_neigh^T mean_{s in N(d)} h_s + b
// with separate self and neighbour weights; a destination without neighbours aggregates 0.
//
// The neighbour term's two products run in the cheaper order (nn/product_order.h). Aggregate
// first where a sampled block has far more sources than destinations: averaging the
// in_dim-wide source rows down to num_dst rows before the GEMM costs E*in_dim +
// num_dst*in_dim*out_dim, against num_src*in_dim*out_dim for transforming every source first.
// Then the self rows and the aggregate sit side by side in one num_dst x 2*in_dim matrix
// [h_d | mean], and W_self, W_neigh are the two halves of one 2*in_dim x out_dim weight, so
// forward is one GEMM (K = 2*in_dim) and the weight gradient is another. Transform first where
// wide inputs meet few outputs (DGL's SAGEConv does the same): every source times W_neigh,
// averaged out_dim wide, plus the destinations times W_self.
//
// Parameters: "w_self" (in x out), "w_neigh" (in x out), "bias" (1 x out, unless disabled).
// Glorot uniform with gain sqrt(2) (DGL's choice for SAGEConv), bias 0.
#pragma once

#include <algorithm>
#include <cstdint>

#include "nn/layer.h"
#include "nn/layer_bias.h"
#include "nn/product_order.h"

namespace strata {

// Glorot uniform (gain sqrt(2)) of a 2 in_dim x out_dim weight, W_self over W_neigh, from the
// layer's seed: SAGEConv's initialisation, which the full-graph runner shares.
template <typename T>
void InitSageWeight(MatrixSpan<T> weight, uint64_t seed);

template <typename T>
class BasicSageConv final : public BasicLayer<T> {
 public:
  BasicSageConv(size_t in_dim, size_t out_dim, uint64_t seed, bool bias = true);

  void Forward(const LayerInput<T>& input, BasicMatrix<T>& out) override;
  void Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) override;
  // Gathered: a source's row times W_neigh; self: a destination's row times W_self.
  size_t gathered_width() const override { return out_dim_; }
  size_t self_width() const override { return out_dim_; }
  void TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const override;
  void TransformSelf(MatrixSpan<const T> in, MatrixSpan<T> self) const override;
  void Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered, MatrixSpan<const T> self,
                 std::span<const T> gcn_norm, MatrixSpan<T> out) override;
  bool aggregates_inputs() const override { return true; }
  void CombineAggregated(MatrixSpan<const T> self, MatrixSpan<const T> aggregated,
                         MatrixSpan<T> out) const override;
  std::vector<BasicParameter<T>> Parameters(const std::string& prefix) override;
  size_t in_dim() const override { return in_dim_; }
  size_t out_dim() const override { return out_dim_; }
  size_t AllocatedBytes() const override {
    return CapacityBytes<T>({&weight_, &weight_grad_, &self_and_mean_, &grad_self_and_mean_,
                             &transformed_, &grad_transformed_}) +
           bias_.AllocatedBytes() + csc_.allocated_bytes();
  }
  // AllocatedBytes' most after Forward and Backward on blocks within `shape`, in either order;
  // `input_grad`: Backward computes the input's gradient (every layer but the first).
  static uint64_t BytesBound(size_t in, size_t out, bool bias, bool input_grad,
                             const BlockShape& shape) {
    const uint64_t parameters = 2 * (2 * in * out + (bias ? out : 0)) * sizeof(T);
    // The multiplied-first rows and their gradient, for the most sources that order takes.
    const uint64_t multiplied =
        std::min<uint64_t>(shape.src, MostSourcesMultipliedFirst(shape.edges, shape.dst, in, out));
    const uint64_t saved =
        ((input_grad ? 2 : 1) * shape.dst * 2 * in + 2 * multiplied * out) * sizeof(T);
    const uint64_t csc = (shape.src + 1 + VectorBytesBound(2 * shape.edges)) * sizeof(uint32_t);
    return parameters + MatrixBytesBound(saved) + csc;
  }

 private:
  MatrixSpan<const T> SelfWeight() const { return weight_.span().RowRange(0, in_dim_); }
  MatrixSpan<const T> NeighbourWeight() const { return weight_.span().RowRange(in_dim_, in_dim_); }
  void BackwardTransformedFirst(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in);

  size_t in_dim_;
  size_t out_dim_;
  BasicMatrix<T> weight_;  // rows [0, in) are W_self, rows [in, 2 in) W_neigh
  BasicMatrix<T> weight_grad_;
  LayerBias<T> bias_;

  // Saved by Forward for Backward.
  BlockCsr graph_;
  bool transform_first_ = false;
  MatrixSpan<const T> input_;     // transform first: the features, for the weight gradient
  BasicMatrix<T> self_and_mean_;  // aggregate first: num_dst x 2 in, [h_d | mean of neighbours]
  BasicMatrix<T> transformed_;    // transform first: num_src x out, the features times W_neigh
  // Backward scratch.
  BasicMatrix<T> grad_self_and_mean_;
  BasicMatrix<T> grad_transformed_;
  BlockCsc csc_;
};

using SageConv = BasicSageConv<float>;

}  // namespace strata
