// GCNConv (Kipf & Welling) with symmetric normalisation and self loops:
//   h'_d = sum over s in N(d) ∪ {d} of W^T h_s / sqrt(deg(s) + 1) / sqrt(deg(d) + 1) + b
// where deg is the node's in-degree in the FULL graph, not in the sampled block. The caller
// passes norm[v] = 1 / sqrt(deg(v) + 1) for every source of the block (destinations first,
// as in the block's numbering), so that with full neighbourhoods a mini-batch computes
// exactly the full-graph GCN; with sampled neighbourhoods it is the usual unbiased-in-
// structure approximation.
//
// The order of the two products follows their cost (nn/product_order.h): aggregate first
// (num_dst x in_dim, then one GEMM) where the inputs are narrow or the sources many, transform
// first (num_src x out_dim, then a narrow aggregation) where the inputs are wide.
//
// Parameters: "weight" (in x out, Glorot uniform, gain 1 as DGL's GraphConv and Kipf's GCN),
// "bias" (1 x out, 0; Kipf's reference has none, so it can be disabled).
#pragma once

#include <algorithm>
#include <cstdint>

#include "nn/layer.h"
#include "nn/layer_bias.h"
#include "nn/product_order.h"

namespace strata {

// A GCN layer's weight (in x out) as the layer draws it from `seed`: Glorot uniform, gain 1.
// Shared with the full-graph runner, so that both paths start from the same model.
template <typename T>
void InitGcnWeight(MatrixSpan<T> weight, uint64_t seed);

template <typename T>
class BasicGcnConv final : public BasicLayer<T> {
 public:
  BasicGcnConv(size_t in_dim, size_t out_dim, uint64_t seed, bool bias = true);

  void Forward(const LayerInput<T>& input, BasicMatrix<T>& out) override;
  void Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) override;
  // Gathered: a source's row times W; the self loop is one more gathered row.
  size_t gathered_width() const override { return out_dim_; }
  void TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const override;
  void Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered, MatrixSpan<const T> self,
                 std::span<const T> gcn_norm, MatrixSpan<T> out) override;
  bool aggregates_inputs() const override { return true; }
  void CombineAggregated(MatrixSpan<const T> self, MatrixSpan<const T> aggregated,
                         MatrixSpan<T> out) const override;
  std::vector<BasicParameter<T>> Parameters(const std::string& prefix) override;
  size_t in_dim() const override { return in_dim_; }
  size_t out_dim() const override { return out_dim_; }
  size_t AllocatedBytes() const override {
    return CapacityBytes<T>({&weight_, &weight_grad_, &aggregate_, &grad_aggregate_, &transformed_,
                             &grad_transformed_}) +
           bias_.AllocatedBytes() + csc_.allocated_bytes();
  }
  // AllocatedBytes' most after Forward and Backward on blocks within `shape`, in either order;
  // `input_grad`: Backward computes the input's gradient (every layer but the first).
  static uint64_t BytesBound(size_t in, size_t out, bool bias, bool input_grad,
                             const BlockShape& shape) {
    const uint64_t parameters = 2 * (in * out + (bias ? out : 0)) * sizeof(T);
    // The multiplied-first rows and their gradient, for the most sources that order takes.
    const uint64_t multiplied = std::min<uint64_t>(
        shape.src, MostSourcesMultipliedFirst(shape.edges + shape.dst, shape.dst, in, out));
    const uint64_t saved =
        ((input_grad ? 2 : 1) * shape.dst * in + 2 * multiplied * out) * sizeof(T);
    const uint64_t csc = (shape.src + 1 + VectorBytesBound(2 * shape.edges)) * sizeof(uint32_t);
    return parameters + MatrixBytesBound(saved) + csc;
  }

 private:
  // out = the normalised sum of the transformed rows over the block's edges and self loops, +
  // the bias: Forward's second half when it transforms first, and Aggregate's.
  void Propagate(const BlockCsr& graph, std::span<const T> norm, MatrixSpan<const T> transformed,
                 MatrixSpan<T> out) const;

  size_t in_dim_;
  size_t out_dim_;
  BasicMatrix<T> weight_;
  BasicMatrix<T> weight_grad_;
  LayerBias<T> bias_;

  // Saved by Forward for Backward.
  BlockCsr graph_;
  std::span<const T> norm_;
  bool transform_first_ = false;
  MatrixSpan<const T> input_;   // transform first: the features, for the weight gradient
  BasicMatrix<T> aggregate_;    // aggregate first: num_dst x in, the normalised sum
  BasicMatrix<T> transformed_;  // transform first: num_src x out, the features times W
  // Backward scratch.
  BasicMatrix<T> grad_aggregate_;
  BasicMatrix<T> grad_transformed_;
  BlockCsc csc_;
};

using GcnConv = BasicGcnConv<float>;

}  // namespace strata
