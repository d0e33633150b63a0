#include "nn/adam.h"

#include <cmath>

namespace strata {

Adam::Adam(std::vector<Parameter> params, const AdamOptions& options)
    : Optimizer(std::move(params)), options_(options) {
  for (const Parameter& p : params_) {
    m_.emplace_back(p.value.rows(), p.value.cols());
    v_.emplace_back(p.value.rows(), p.value.cols());
  }
}

void Adam::Step() {
  ++steps_;
  const double t = static_cast<double>(steps_);
  const float beta1 = static_cast<float>(options_.beta1);
  const float beta2 = static_cast<float>(options_.beta2);
  const float one_minus_beta1 = static_cast<float>(1.0 - options_.beta1);
  const float one_minus_beta2 = static_cast<float>(1.0 - options_.beta2);
  const float step_size = static_cast<float>(options_.lr / (1.0 - std::pow(options_.beta1, t)));
  const float bias2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(options_.beta2, t)));
  const float eps = static_cast<float>(options_.eps);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Parameter& p = params_[i];
    const float decay = decayed(i) ? static_cast<float>(options_.weight_decay) : 0.0f;
    float* m = m_[i].data();
    float* v = v_[i].data();
    size_t k = 0;
    for (size_t r = 0; r < p.value.rows(); ++r) {
      float* value = p.value.row(r);
      const float* grad = p.grad.row(r);
      for (size_t c = 0; c < p.value.cols(); ++c, ++k) {
        float g = grad[c];
        if (decay != 0) g += decay * value[c];
        m[k] = beta1 * m[k] + one_minus_beta1 * g;
        v[k] = beta2 * v[k] + one_minus_beta2 * g * g;
        float denom = std::sqrt(v[k]) / bias2_sqrt + eps;
        value[c] -= step_size * (m[k] / denom);
      }
    }
  }
}

std::vector<OptimizerState> Adam::State() {
  std::vector<OptimizerState> state;
  for (size_t i = 0; i < params_.size(); ++i) {
    state.push_back({"adam.m." + params_[i].name, m_[i].span()});
    state.push_back({"adam.v." + params_[i].name, v_[i].span()});
  }
  return state;
}

}  // namespace strata
