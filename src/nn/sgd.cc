#include "nn/sgd.h"

#include "strata/error.h"

namespace strata {

Sgd::Sgd(std::vector<Parameter> params, const SgdOptions& options)
    : Optimizer(std::move(params)), options_(options) {
  if (options.momentum < 0) throw Error::Input("SGD momentum must not be negative");
  if (options.momentum > 0) {
    for (const Parameter& p : params_) momentum_.emplace_back(p.value.rows(), p.value.cols());
  }
}

void Sgd::Step() {
  const bool first = steps_ == 0;
  ++steps_;
  const float lr = static_cast<float>(options_.lr);
  const float momentum = static_cast<float>(options_.momentum);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Parameter& p = params_[i];
    const float decay = decayed(i) ? static_cast<float>(options_.weight_decay) : 0.0f;
    float* buf = momentum_.empty() ? nullptr : momentum_[i].data();
    size_t k = 0;
    for (size_t r = 0; r < p.value.rows(); ++r) {
      float* value = p.value.row(r);
      const float* grad = p.grad.row(r);
      for (size_t c = 0; c < p.value.cols(); ++c, ++k) {
        float g = grad[c];
        if (decay != 0) g += decay * value[c];
        if (buf != nullptr) {
          buf[k] = first ? g : momentum * buf[k] + g;
          g = buf[k];
        }
        value[c] -= lr * g;
      }
    }
  }
}

std::vector<OptimizerState> Sgd::State() {
  std::vector<OptimizerState> state;
  for (size_t i = 0; i < momentum_.size(); ++i) {
    state.push_back({"sgd.momentum." + params_[i].name, momentum_[i].span()});
  }
  return state;
}

}  // namespace strata
