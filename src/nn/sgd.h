// Stochastic gradient descent with optional momentum and weight decay, as torch.optim.SGD
// (dampening 0, no Nesterov):
//   g = grad + weight_decay * value
//   buf = g on the first step, momentum * buf + g after      (only when momentum > 0)
//   value -= lr * (momentum > 0 ? buf : g)
#pragma once

#include "nn/optimizer.h"

namespace strata {

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0;
  double weight_decay = 0;
};

class Sgd final : public Optimizer {
 public:
  Sgd(std::vector<Parameter> params, const SgdOptions& options);

  void Step() override;
  std::string_view kind() const override { return "sgd"; }
  std::vector<OptimizerState> State() override;

 private:
  SgdOptions options_;
  std::vector<Matrix> momentum_;  // one per parameter when momentum > 0, else none
};

}  // namespace strata
