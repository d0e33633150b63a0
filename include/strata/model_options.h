// The network a training run builds and the optimizer that trains it, as a user chooses them.
// ModelOptions is what a checkpoint records, so that `strata eval` rebuilds the same network.
#pragma once

#include <cstddef>
#include <string_view>

namespace strata {

enum class ModelKind { kSage, kGcn, kGat };
// "sage" | "gcn" | "gat"; anything else throws an input error.
ModelKind ParseModelKind(std::string_view name);
std::string_view ModelKindName(ModelKind kind);

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
};

enum class OptimizerKind { kAdam, kSgd };
// "adam" | "sgd"; anything else throws an input error.
OptimizerKind ParseOptimizerKind(std::string_view name);
std::string_view OptimizerKindName(OptimizerKind kind);

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 0.01;
  double weight_decay = 0;  // L2, on every parameter
};

}  // namespace strata
