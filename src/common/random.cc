#include "common/random.h"

#include <cmath>

namespace strata {
namespace {

// The ziggurat of G. Marsaglia and W. W. Tsang, "The Ziggurat Method for Generating Random
// Variables" (J. Stat. Software 5(8), 2000), 128 layers of equal area kVolume under the
// unnormalised density exp(-x^2 / 2); the base layer's right edge is kEdge.
constexpr double kEdge = 3.442619855899;
constexpr double kVolume = 9.91256303526217e-3;
constexpr double kScale = 2147483648.0;  // 2^31: j is a signed 32-bit draw

double Density(double x) { return std::exp(-0.5 * x * x); }

}  // namespace

const Rng::ZigguratTables& Rng::Ziggurat() {
  static const ZigguratTables tables = [] {
    ZigguratTables z{};
    double edge = kEdge;
    double last = edge;
    const double base = kVolume / Density(edge);  // the base layer's width, tail included
    z.k[0] = static_cast<uint32_t>(edge / base * kScale);
    z.k[1] = 0;
    z.w[0] = base / kScale;
    z.w[127] = edge / kScale;
    z.f[0] = 1.0;
    z.f[127] = Density(edge);
    for (int i = 126; i >= 1; --i) {
      edge = std::sqrt(-2.0 * std::log(kVolume / edge + Density(edge)));
      z.k[i + 1] = static_cast<uint32_t>(edge / last * kScale);
      last = edge;
      z.f[i] = Density(edge);
      z.w[i] = edge / kScale;
    }
    return z;
  }();
  return tables;
}

double Rng::NormalEdge(uint32_t layer, int32_t j) {
  const ZigguratTables& z = Ziggurat();
  for (;;) {
    const double x = j * z.w[layer];
    if (layer == 0) {
      // The tail beyond kEdge (Marsaglia's exponential method), on the draw's side.
      double tail;
      double y;
      do {
        tail = -std::log(1.0 - Uniform()) / kEdge;
        y = -std::log(1.0 - Uniform());
      } while (y + y < tail * tail);
      return j > 0 ? kEdge + tail : -kEdge - tail;
    }
    // The wedge between layer `layer`'s rectangle and the curve: accept under the density.
    if (z.f[layer] + Uniform() * (z.f[layer - 1] - z.f[layer]) < Density(x)) return x;
    const uint64_t u = Next();
    layer = u & 127;
    j = static_cast<int32_t>(u >> 32);
    if (static_cast<uint32_t>(j < 0 ? -static_cast<int64_t>(j) : j) < z.k[layer]) {
      return j * z.w[layer];
    }
  }
}

}  // namespace strata
