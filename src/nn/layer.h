// BasicLayer is the interface of one message-passing layer (SAGEConv, GCNConv, GATConv):
// an explicit forward over one block and an explicit backward, with the layer keeping what
// backward needs from forward.
//
// Contract: Backward follows the Forward it differentiates, before the next Forward. The
// graph and input that Forward saw must stay alive and unchanged until then (layers keep
// views, not copies, of them). Backward overwrites the parameter gradients; it writes the
// input gradient only when asked (the first layer's input features need none, so the model
// skips that whole transposed SpMM). Buffers are reused from step to step.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nn/matrix.h"
#include "nn/parameter.h"
#include "nn/sparse.h"

namespace strata {

// The largest block a layer's buffers are planned for: the memory plan's bound on any batch
// (minibatch/batch_bound.h), for BytesBound below.
struct BlockShape {
  uint64_t dst = 0;
  uint64_t src = 0;  // destinations included
  uint64_t edges = 0;
};

// Bytes of a buffer that grows to `need` bytes at most: a matrix grows by a quarter at least
// (matrix.h), a std::vector filled by resize or appends by up to twice.
inline uint64_t MatrixBytesBound(uint64_t need) { return need + need / 4; }
inline uint64_t VectorBytesBound(uint64_t need) { return 2 * need; }

template <typename T>
struct LayerInput {
  BlockCsr graph;                // this layer's block
  MatrixSpan<const T> features;  // graph.num_src rows of in_dim() values
  std::span<const T> gcn_norm;   // GCN only: 1/sqrt(deg + 1) of each source, destinations first
  bool training = false;         // enables dropout inside the layer (GAT attention)
  uint64_t seed = 0;             // picks those dropout masks
};

template <typename T>
class BasicLayer {
 public:
  virtual ~BasicLayer() = default;

  // out becomes graph.num_dst x out_dim().
  virtual void Forward(const LayerInput<T>& input, BasicMatrix<T>& out) = 0;
  // grad_out is num_dst x out_dim(). With grad_in non-null it becomes num_src x in_dim()
  // holding dL/dfeatures.
  virtual void Backward(MatrixSpan<const T> grad_out, BasicMatrix<T>* grad_in) = 0;

  // Layer-wise inference (minibatch/layerwise_inference.h) runs Forward in two halves, each walking
  // nodes in id order, so that a layer's input streams instead of being gathered per batch.
  // TransformSources maps input rows, each on its own, to the gathered_width() values that an
  // aggregation reads of a source; TransformSelf maps a destination's input row to the
  // self_width() values of its own term (a layer with none has self_width() 0). Aggregate then
  // computes a block's destinations from `gathered` (graph.num_src rows, destinations first),
  // `self` (graph.num_dst rows, empty without a self term) and, for GCN, gcn_norm as in
  // LayerInput, into `out` (graph.num_dst x out_dim()), dropout off. Together they give
  // Forward(training = false)'s outputs up to rounding.
  virtual size_t gathered_width() const = 0;
  virtual size_t self_width() const { return 0; }
  virtual void TransformSources(MatrixSpan<const T> in, MatrixSpan<T> gathered) const = 0;
  virtual void TransformSelf(MatrixSpan<const T> in, MatrixSpan<T> self) const {}
  virtual void Aggregate(const BlockCsr& graph, MatrixSpan<const T> gathered,
                         MatrixSpan<const T> self, std::span<const T> gcn_norm,
                         MatrixSpan<T> out) = 0;

  // Where not even the transformed rows of a layer's sources fit, layers whose aggregation is a
  // weighted sum of input rows (SAGE's mean, GCN's normalised sum) are run input-first instead:
  // the caller sums each destination's input rows (aggregates_inputs()), and CombineAggregated
  // maps them to `out` (rows x out_dim()) from `self` (each destination's own input row; empty
  // for a layer with self_width() 0) and `aggregated` (SAGE: the mean of the in-neighbours' rows;
  // GCN: the sum of n_s n_d h_s over N(d) and d itself), as Forward(training = false) does.
  virtual bool aggregates_inputs() const { return false; }
  virtual void CombineAggregated(MatrixSpan<const T> self, MatrixSpan<const T> aggregated,
                                 MatrixSpan<T> out) const {}

  // Parameters named "<prefix><name>", in a fixed order.
  virtual std::vector<BasicParameter<T>> Parameters(const std::string& prefix) = 0;
  virtual size_t in_dim() const = 0;
  virtual size_t out_dim() const = 0;
  // Bytes the layer has allocated: parameters, their gradients, and the activations it keeps
  // for Backward (which grow with the largest block seen). Each layer also states, as a
  // static BytesBound, the most this can reach over blocks no larger than a BlockShape.
  virtual size_t AllocatedBytes() const = 0;

  void set_threads(unsigned threads) { threads_ = threads == 0 ? 1 : threads; }

 protected:
  unsigned threads_ = 1;
};

}  // namespace strata
