#include "nn/gradient_sum.h"

#include <utility>

namespace strata {

GradientSum::GradientSum(std::vector<Parameter> params) : params_(std::move(params)) {
  size_t values = 0;
  for (const Parameter& p : params_) values += p.grad.rows() * p.grad.cols();
  sum_.assign(values, 0.0f);
}

void GradientSum::Add(uint64_t labelled, bool first) {
  if (first) labelled_ = 0;
  const float weight = static_cast<float>(labelled);
  float* out = sum_.data();
  for (const Parameter& p : params_) {
    for (size_t r = 0; r < p.grad.rows(); ++r) {
      const float* grad = p.grad.row(r);
      for (size_t c = 0; c < p.grad.cols(); ++c, ++out) {
        *out = (first ? 0.0f : *out) + grad[c] * weight;
      }
    }
  }
  labelled_ += labelled;
}

uint64_t GradientSum::Finish() {
  const float scale = labelled_ > 0 ? 1.0f / static_cast<float>(labelled_) : 0.0f;
  const float* in = sum_.data();
  for (const Parameter& p : params_) {
    for (size_t r = 0; r < p.grad.rows(); ++r) {
      float* grad = p.grad.row(r);
      for (size_t c = 0; c < p.grad.cols(); ++c) grad[c] = *in++ * scale;
    }
  }
  return labelled_;
}

}  // namespace strata
