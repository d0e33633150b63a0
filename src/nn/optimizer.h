// Optimizer updates a fixed list of parameters from their gradients, one Step per batch.
// Subclasses keep per-parameter state (moments, momentum) that checkpoints save and restore
// through State(): named tensors in a fixed order, plus the step count.
//
// Invariant: the parameter views passed at construction stay valid for the optimizer's life
// (they point into the model's layers).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/matrix.h"
#include "nn/parameter.h"
#include "strata/model_options.h"

namespace strata {

struct OptimizerState {
  std::string name;
  MatrixSpan<float> values;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // value -= update(grad), for every parameter.
  virtual void Step() = 0;
  // "adam" or "sgd", as recorded in checkpoints.
  virtual std::string_view kind() const = 0;
  // The per-parameter state tensors, named "<kind>.<what>.<parameter name>".
  virtual std::vector<OptimizerState> State() = 0;

  // Weight decay applies to parameter i only where decayed[i] (default: to every parameter).
  void set_decayed(std::vector<bool> decayed) { decayed_ = std::move(decayed); }
  bool decayed(size_t i) const { return decayed_.empty() || decayed_[i]; }

  uint64_t steps() const { return steps_; }
  void set_steps(uint64_t steps) { steps_ = steps; }

 protected:
  explicit Optimizer(std::vector<Parameter> params) : params_(std::move(params)) {}
  std::vector<Parameter> params_;
  std::vector<bool> decayed_;
  uint64_t steps_ = 0;
};

// Which of `params` (named "layers.<l>.<name>", as BasicModel names them) `scope` decays.
std::vector<bool> DecayedParameters(std::span<const Parameter> params, WeightDecayScope scope);

// Adam (betas 0.9, 0.999) or SGD with momentum 0.9, as `options` asks, over `params`, with
// weight decay on the parameters of options.weight_decay_scope.
std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerOptions& options,
                                         std::vector<Parameter> params);

}  // namespace strata
