#include "sampling/labor_variates.h"

#include <cmath>
#include <numbers>

#include "common/random.h"

namespace strata {
namespace {

constexpr uint64_t kLaborStream = 0x6c61626f72000000ull;  // "labor"

double UnitUniform(uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
}

}  // namespace

LaborVariates::LaborVariates(uint64_t seed, uint64_t epoch, uint64_t layer, uint64_t batch,
                             uint32_t dependency)
    : seed_(MixSeed(MixSeed(MixSeed(seed, kLaborStream), epoch), layer)),
      window_(batch / (dependency == 0 ? 1 : dependency)),
      independent_(dependency <= 1) {
  const uint32_t k = dependency == 0 ? 1 : dependency;
  const double alpha = static_cast<double>(batch % k) / k;
  first_weight_ = std::cos(std::numbers::pi / 2 * alpha);
  second_weight_ = std::sin(std::numbers::pi / 2 * alpha);
}

double LaborVariates::Normal(uint64_t window, uint64_t node) const {
  // A normal per (window, node), drawn without state: the ziggurat from a stream of its own.
  Rng rng(MixSeed(MixSeed(seed_, window), node));
  return rng.Normal();
}

double LaborVariates::operator()(uint64_t node) const {
  // Independent batches need no interpolation: a hashed uniform is the same distribution, for
  // a fraction of the cost.
  if (independent_) return UnitUniform(MixSeed(MixSeed(seed_, window_), node));
  double z = first_weight_ * Normal(window_, node);
  if (second_weight_ != 0) z += second_weight_ * Normal(window_ + 1, node);
  // cos² + sin² = 1 keeps z standard normal; Φ(z) is then uniform.
  return 0.5 * std::erfc(-z / std::numbers::sqrt2);
}

}  // namespace strata
