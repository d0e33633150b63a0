#include "runner/gradient_allreduce.h"

#include "common/clock.h"
#include "strata/error.h"

namespace strata {
GradientAllreduce::GradientAllreduce(Collective& ranks, std::vector<std::vector<Parameter>> layers,
                                     MemoryBudget& budget)
    : ranks_(ranks), layers_(std::move(layers)) {
  for (const std::vector<Parameter>& layer : layers_) {
    size_t values = 1;  // the count
    for (const Parameter& p : layer) values += p.grad.rows() * p.grad.cols();
    buckets_.emplace_back(budget, values, "gradient sums between ranks");
  }
}

void GradientAllreduce::BeginStep(uint64_t labelled) {
  // Counts travel as float32 beside the gradients: exact below 2^24 seeds a step.
  if (labelled >= (uint64_t{1} << 24)) {
    throw Error::Input("a data-parallel step has 2^24 or more seeds; lower --batch-size");
  }
  labelled_ = static_cast<float>(labelled);
}

void GradientAllreduce::LayerDone(size_t layer) {
  const uint64_t start_ns = MonotonicNs();
  ChargedArray<float>& bucket = buckets_.at(layer);
  float* out = bucket.data();
  for (const Parameter& p : layers_[layer]) {
    for (size_t r = 0; r < p.grad.rows(); ++r) {
      const float* grad = p.grad.row(r);
      for (size_t c = 0; c < p.grad.cols(); ++c) *out++ = grad[c] * labelled_;
    }
  }
  *out = labelled_;
  ranks_.StartSum({bucket.data(), bucket.size()});
  ranks_.Progress();
  seconds_ += static_cast<double>(MonotonicNs() - start_ns) * 1e-9;
}

uint64_t GradientAllreduce::Finish() {
  const uint64_t start_ns = MonotonicNs();
  ranks_.WaitAll();
  const float total = buckets_.empty() ? 0 : buckets_[0][buckets_[0].size() - 1];
  const float scale = total > 0 ? 1.0f / total : 0.0f;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const float* in = buckets_[l].data();
    for (const Parameter& p : layers_[l]) {
      for (size_t r = 0; r < p.grad.rows(); ++r) {
        float* grad = p.grad.row(r);
        for (size_t c = 0; c < p.grad.cols(); ++c) grad[c] = *in++ * scale;
      }
    }
  }
  seconds_ += static_cast<double>(MonotonicNs() - start_ns) * 1e-9;
  return static_cast<uint64_t>(total);
}

uint64_t GradientAllreduce::bytes_per_step() const {
  uint64_t values = 0;
  for (const ChargedArray<float>& bucket : buckets_) values += bucket.size();
  return values * sizeof(float);
}

}  // namespace strata
