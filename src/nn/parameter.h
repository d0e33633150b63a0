// A Parameter names one trainable tensor and its gradient, as views into storage that the
// layer owning them keeps for its whole life (the views stay valid as long as the layer).
// Optimizers update value from grad; checkpoints save and restore value by name.
//
// Invariants: value and grad have the same shape; names are unique within a model.
#pragma once

#include <string>

#include "nn/matrix.h"

namespace strata {

template <typename T>
struct BasicParameter {
  std::string name;
  MatrixSpan<T> value;
  MatrixSpan<T> grad;
};

using Parameter = BasicParameter<float>;

}  // namespace strata
