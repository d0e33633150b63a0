// The network a training run builds and the optimizer that trains it, as a user chooses them.
// ModelOptions is what a checkpoint records, so that `strata eval` rebuilds the same network.
#pragma once

#include <cstddef>
#include <string_view>

namespace strata {

// kMlp reads each node's own features only (no neighbours): the baseline a GNN is measured
// against.
enum class ModelKind { kSage, kGcn, kGat, kMlp };
// "sage" | "gcn" | "gat" | "mlp"; anything else throws an input error.
ModelKind ParseModelKind(std::string_view name);
std::string_view ModelKindName(ModelKind kind);

// Between layers. ELU (alpha 1) is the GAT paper's; ReLU everyone else's.
enum class Activation { kRelu, kElu };
// "relu" | "elu"; anything else throws an input error.
Activation ParseActivation(std::string_view name);
std::string_view ActivationName(Activation activation);

// Layer widths: in_dim -> hidden -> ... -> hidden -> num_classes (in_dim and num_classes come
// from the dataset). For GAT, hidden is per head: hidden layers output heads * hidden
// (concatenated) and the last layer averages out_heads heads of num_classes.
struct ModelOptions {
  ModelKind kind = ModelKind::kSage;
  size_t layers = 2;
  size_t hidden = 256;
  size_t heads = 8;              // GAT hidden layers, concatenated
  size_t out_heads = 1;          // GAT last layer, averaged
  double dropout = 0.5;          // after each hidden layer's ReLU
  double input_dropout = 0;      // on the input features (the GCN and GAT papers use it)
  double attention_dropout = 0;  // GAT: on the attention coefficients
  bool bias = true;              // every layer adds a learned bias (Kipf's GCN has none)
  Activation activation = Activation::kRelu;
};

enum class OptimizerKind { kAdam, kSgd };
// "adam" | "sgd"; anything else throws an input error.
OptimizerKind ParseOptimizerKind(std::string_view name);
std::string_view OptimizerKindName(OptimizerKind kind);

// Which parameters weight decay applies to, as PyTorch recipes choose them with parameter
// groups: every parameter; weights only (not biases); the first layer's weights only (Kipf's
// GCN). "Weights" are all parameters but biases (GAT's attention vectors included).
enum class WeightDecayScope { kAll, kWeights, kFirstLayer };
// "all" | "weights" | "first-layer"; anything else throws an input error.
WeightDecayScope ParseWeightDecayScope(std::string_view name);

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 0.01;
  double weight_decay = 0;  // L2, added to the gradient (torch.optim's weight_decay)
  WeightDecayScope weight_decay_scope = WeightDecayScope::kAll;
};

}  // namespace strata
