// Linear is the layer of a multilayer perceptron, the baseline that reads only a node's own
// features: h'_d = W^T h_d + b for each destination d of the block, its edges and other
// sources ignored. A model of these layers is the MLP that OGB reports beside every GNN, what
// a graph adds to the features alone. Mini-batches for it sample no neighbours (fanout 0), so
// a block's sources are its destinations.
//
// Parameters: "weight" (in x out, Glorot uniform, gain 1), "bias" (1 x out, unless disabled).
#pragma once

#include <cstdint>

#include "nn/layer.h"
#include "nn/layer_bias.h"

namespace strata {

template <typename T>
class BasicLinear final : public BasicLayer<T> {
 public:
  BasicLinear(size_t in_dim, size_t out_dim, uint64_t seed, bool bias = true);

  void Forward(const LayerInput<T>& input, BasicMatrix<T>& out) override;
  // The input gradient of sources that are not destinations is 0.
  void Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) override;
  // Nothing is gathered; self: a destination's row times W.
  size_t gathered_width() const override { return 0; }
  size_t self_width() const override { return out_dim_; }
  void TransformSources(MatrixSpan<const T> /*in*/, MatrixSpan<T> /*gathered*/) const override {}
  void TransformSelf(MatrixSpan<const T> in, MatrixSpan<T> self) const override;
  void Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered, MatrixSpan<const T> self,
                 std::span<const T> gcn_norm, MatrixSpan<T> out) override;
  std::vector<BasicParameter<T>> Parameters(const std::string& prefix) override;
  size_t in_dim() const override { return in_dim_; }
  size_t out_dim() const override { return out_dim_; }
  size_t AllocatedBytes() const override {
    return CapacityBytes<T>({&weight_, &weight_grad_}) + bias_.AllocatedBytes();
  }
  // AllocatedBytes' most: the layer keeps views of its input, no activations.
  static uint64_t BytesBound(size_t in, size_t out, bool bias) {
    return 2 * (in * out + (bias ? out : 0)) * sizeof(T);
  }

 private:
  size_t in_dim_;
  size_t out_dim_;
  BasicMatrix<T> weight_;
  BasicMatrix<T> weight_grad_;
  LayerBias<T> bias_;
  // Saved by Forward for Backward.
  MatrixSpan<const T> input_;  // the destinations' rows
  size_t num_src_ = 0;
};

using Linear = BasicLinear<float>;

}  // namespace strata
