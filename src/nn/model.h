// BasicModel is a stack of L message-passing layers of one kind (GraphSAGE, GCN or GAT)
// trained on sampled mini-batches: forward over a batch's blocks (input layer first) from
// the input feature matrix to the seeds' logits, backward from the loss gradient, and the
// list of parameters for the optimizer and checkpoints.
//
// Between layers: the activation (ReLU, or ELU for the GAT paper's recipe), then dropout
// (training only), fused into one pass whose backward needs no stored mask. Optionally dropout on
// the input features too (the GCN and GAT papers do this; it costs a copy of the input matrix, so
// it is off by default).
//
// Dropout masks come from (step_seed, layer, node): a row's mask is keyed by the node the row is
// (the block's node ids), not by its place in the batch, so a node gets the same mask whichever
// data-parallel rank's share of the batch holds it. Parameters come from (config.seed, layer),
// numbered in nn/model_seeds.h: the same seeds give bit-identical parameters, outputs and
// gradients, for any config.threads.
//
// Memory: every buffer is kept and reused across steps, so steady-state training allocates
// only when a batch is larger than any before it. Forward keeps views of the blocks and the
// feature matrix; they must stay alive and unchanged until Backward returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/dropout_masks.h"
#include "nn/hidden_history.h"
#include "nn/layer.h"
#include "nn/matrix.h"
#include "nn/parameter.h"
#include "strata/block.h"
#include "strata/model_options.h"

namespace strata {

// The user's choices (strata/model_options.h: kind, widths, dropout) completed by what the
// dataset and the run fix.
struct ModelConfig : ModelOptions {
  size_t in_dim = 0;
  size_t num_classes = 0;
  uint64_t seed = 0;
  unsigned threads = 1;  // kernel threads (GEMM included)
};

// Throws an input error naming the option when `options` cannot describe a network (no
// layers, no hidden width, a dropout outside [0, 1), a GAT without heads): the one statement
// of these rules, for the mini-batch model and the full-graph runner alike.
void CheckModelOptions(const ModelOptions& options);

template <typename T>
class BasicModel {
 public:
  // Builds and initialises the layers. Throws strata::Error (input) on a bad config.
  explicit BasicModel(const ModelConfig& config);
  ~BasicModel();
  BasicModel(const BasicModel&) = delete;
  BasicModel& operator=(const BasicModel&) = delete;

  // blocks: config.layers blocks, input layer first, chained (blocks[l].num_dst() ==
  // blocks[l + 1].num_src()). features: blocks[0].num_src() x in_dim, one row per input
  // node. gcn_norm (GCN only): 1/sqrt(in-degree + 1) of each input node; later layers use its
  // prefixes, since each block's sources are the first sources of the block before it.
  // training: dropout on. step_seed: picks the dropout masks. history (empty, or one per
  // hidden layer: history[l - 1] for layer l's input): the stale rows replace the computed ones
  // after the activation and dropout, and carry no gradient; the fresh rows are filled in.
  // Returns the logits, blocks.back().num_dst() x num_classes, valid until the next Forward.
  MatrixSpan<const T> Forward(std::span<const Block> blocks, MatrixSpan<const T> features,
                              std::span<const T> gcn_norm, bool training, uint64_t step_seed,
                              std::span<HiddenHistory<T>> history = {});

  // Backpropagates dL/dlogits (the shape Forward returned) and overwrites every parameter's
  // gradient. `layer_done(l)`, when given, is called as soon as layer l's parameter gradients
  // are final (the output layer first), while the layers below are still to run: data-parallel
  // training starts their exchange there.
  void Backward(MatrixSpan<const T> grad_logits,
                const std::function<void(size_t)>& layer_done = {});

  // The activation between layers, as evaluation applies it (dropout off), in place: for
  // callers that run the layers themselves (layer-wise inference).
  void HiddenActivation(MatrixSpan<T> rows) const { Activate(rows, 0, 0, {}); }

  // All parameters, named "layers.<l>.<name>", in a fixed order.
  std::vector<BasicParameter<T>> Parameters();
  const ModelConfig& config() const { return config_; }
  // Bytes the model has allocated: every layer's (parameters, gradients, saved activations)
  // and the per-layer outputs and gradients; it grows with the largest batch seen.
  size_t AllocatedBytes() const;
  BasicLayer<T>& layer(size_t l) { return *layers_[l]; }

 private:
  // x = dropout(activation(x)) in place, row i's mask drawn from `seed` and keys[i].
  void Activate(MatrixSpan<T> x, double dropout, uint64_t seed, RowKeys keys) const;
  // A layer's output rows are its block's destinations: keyed by their nodes, so that a node's
  // dropout mask depends on the node, not on its place in the batch.
  static RowKeys DestinationKeys(const Block& block) {
    return RowKeys(std::span<const uint64_t>(block.src_nodes.data(), block.num_dst()));
  }
  // A hidden layer's output rows named fresh, activated without dropout, into history.
  void KeepFreshRows(MatrixSpan<const T> out, HiddenHistory<T>& history) const;
  // Overwrites the stale rows of a hidden layer's activated output with the history's.
  void PutStaleRows(const HiddenHistory<T>& history, MatrixSpan<T> out) const;

  ModelConfig config_;
  std::vector<std::unique_ptr<BasicLayer<T>>> layers_;
  std::vector<BasicMatrix<T>> outputs_;  // per layer; hidden ones hold relu+dropout in place
  std::vector<BasicMatrix<T>> grads_;    // grads_[l]: dL/d(input of layer l + 1)
  BasicMatrix<T> dropped_input_;
  std::span<HiddenHistory<T>> history_;  // the last Forward's, for Backward
  std::span<const Block> blocks_;        // the last Forward's, for ELU's backward masks
  double step_dropout_ = 0;              // the between-layer dropout of the last Forward
  uint64_t step_seed_ = 0;  // and its step seed, which ELU's backward draws the masks from
};

using Model = BasicModel<float>;

// The most Model::AllocatedBytes can reach for `config` over batches whose blocks stay within
// `shapes` (input layer first): parameters, gradients and every buffer, each at its largest.
// With no shapes given, the parameters and their gradients alone.
uint64_t ModelBytesBound(const ModelConfig& config, std::span<const BlockShape> shapes);

}  // namespace strata
