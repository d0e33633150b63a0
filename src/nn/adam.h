// Adam with bias correction, computed as torch.optim.Adam does (amsgrad off):
//   g = grad + weight_decay * value           (L2 added to the gradient, not AdamW)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   value -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// with t the 1-based step number. The per-step scalars are computed in double, the
// elementwise update in float.
#pragma once

#include "nn/optimizer.h"

namespace strata {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
};

class Adam final : public Optimizer {
 public:
  Adam(std::vector<Parameter> params, const AdamOptions& options);

  void Step() override;
  std::string_view kind() const override { return "adam"; }
  std::vector<OptimizerState> State() override;

 private:
  AdamOptions options_;
  std::vector<Matrix> m_;  // first moments, one per parameter
  std::vector<Matrix> v_;  // second moments
};

}  // namespace strata
