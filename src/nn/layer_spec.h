// LayerSpec is one layer of the network a ModelConfig describes, as BasicModel builds it: its
// kind, input width, output width (per head for GAT) and GAT's heads. What plans memory before
// the model exists (ModelBytesBound, layer-wise inference) reads the widths from here; they
// equal the built layer's (nn/layer.h) for every kind.
#pragma once

#include <cstddef>
#include <vector>

#include "nn/gat_conv.h"
#include "strata/model_options.h"

namespace strata {

struct ModelConfig;

struct LayerSpec {
  ModelKind kind = ModelKind::kSage;
  size_t in = 0;
  size_t out = 0;  // per head for GAT
  GatOptions gat;  // GAT only

  // The layer's output width: a GAT layer's heads concatenated, or averaged (the last).
  size_t out_dim() const;
  // BasicLayer's gathered_width(), self_width() and aggregates_inputs() of the built layer.
  size_t gathered_width() const;
  size_t self_width() const;
  bool aggregates_inputs() const;
};

// The config's layers, input layer first; each takes the one before's out_dim().
std::vector<LayerSpec> LayerSpecsOf(const ModelConfig& config);

}  // namespace strata
