#include "sampling/labor_variates.h"

#include <cmath>
#include <limits>
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

double LaborVariates::Key(uint64_t node) const {
  // Independent batches need no interpolation: a hashed uniform is the same distribution, for
  // a fraction of the cost.
  if (independent_) return UnitUniform(MixSeed(MixSeed(seed_, window_), node));
  double z = first_weight_ * Normal(window_, node);
  if (second_weight_ != 0) z += second_weight_ * Normal(window_ + 1, node);
  return z;  // cos² + sin² = 1 keeps it standard normal
}

double LaborVariates::KeyThreshold(double probability) const {
  if (independent_) return probability;
  if (probability >= 1) return std::numeric_limits<double>::infinity();
  if (probability <= 0) return -std::numeric_limits<double>::infinity();
  return NormalQuantile(probability);
}

double LaborVariates::operator()(uint64_t node) const {
  const double key = Key(node);
  return independent_ ? key : 0.5 * std::erfc(-key / std::numbers::sqrt2);
}

double NormalQuantile(double p) {
  // Acklam's rational approximation (relative error below 1.2e-9), then one Halley step on
  // Φ(x) - p, which brings it to about double precision.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - kLow) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

}  // namespace strata
