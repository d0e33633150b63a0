#include "sampling/labor_importance.h"

#include <algorithm>
#include <limits>

#include "common/parallel.h"

namespace strata {
namespace {

constexpr double kConverged = 1e-4;
constexpr uint64_t kMinParallelDestinations = 2048;

}  // namespace

double LaborScale(std::span<const double> weights, uint32_t fanout) {
  // Water-filling: with the weights that saturate (scale * w >= 1) counted as 1, the others
  // share what is left of the fanout in proportion to their weights. Each pass computes the
  // scale for the saturated set that the previous scale gives; the scale only grows, so the set
  // only grows, and a pass whose set is the one its scale was computed for has the answer (a
  // few passes in practice).
  double scale = 0;
  int64_t solved_for = -1;  // the saturated count that `scale` was computed for
  for (;;) {
    int64_t saturated = 0;
    double rest = 0;
    for (double w : weights) {
      if (scale * w >= 1) {
        ++saturated;
      } else {
        rest += w;
      }
    }
    // Rounding can drop a weight that sits exactly at 1 / scale back out of the set; the set
    // never shrinks in exact arithmetic, so a count that does not grow is the answer.
    if (saturated <= solved_for || saturated >= fanout || rest <= 0) break;
    scale = (fanout - static_cast<double>(saturated)) / rest;
    solved_for = saturated;
  }
  return scale;
}

void LaborImportance(std::span<const uint32_t> indptr, std::span<const uint32_t> candidates,
                     uint32_t fanout, int iterations, std::span<double> pi, std::span<double> scale,
                     unsigned threads) {
  const uint64_t num_dst = indptr.size() - 1;
  const unsigned workers = num_dst < kMinParallelDestinations ? 1u : threads;
  std::fill(pi.begin(), pi.end(), 1.0);
  auto solve = [&] {
    ParallelFor(workers, num_dst, [&](uint64_t begin, uint64_t end) {
      std::vector<double> weights;
      for (uint64_t d = begin; d < end; ++d) {
        const uint32_t e0 = indptr[d], e1 = indptr[d + 1];
        if (e1 - e0 <= fanout) {
          scale[d] = std::numeric_limits<double>::infinity();
          continue;
        }
        weights.resize(e1 - e0);
        for (uint32_t e = e0; e < e1; ++e) weights[e - e0] = pi[candidates[e]];
        scale[d] = LaborScale(weights, fanout);
      }
    });
  };
  solve();
  const int steps = iterations < 0 ? kMaxLaborIterations : iterations;
  std::vector<double> taken(pi.size());
  double expected = static_cast<double>(pi.size());
  for (int step = 0; step < steps; ++step) {
    // Serial, in edge order: a maximum per candidate over its destinations.
    std::fill(taken.begin(), taken.end(), 0.0);
    for (uint64_t d = 0; d < num_dst; ++d) {
      for (uint32_t e = indptr[d]; e < indptr[d + 1]; ++e) {
        const uint32_t t = candidates[e];
        taken[t] = std::max(taken[t], std::min(1.0, scale[d] * pi[t]));
      }
    }
    double next = 0;
    for (size_t t = 0; t < pi.size(); ++t) {
      // A candidate that no destination lists keeps its weight.
      if (taken[t] > 0) pi[t] = taken[t];
      next += pi[t];
    }
    solve();
    if (iterations < 0 && expected - next <= kConverged * next) break;
    expected = next;
  }
}

}  // namespace strata
