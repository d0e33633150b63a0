#include "sampling/labor_importance.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "common/parallel.h"

namespace strata {
namespace {

constexpr double kConverged = 1e-4;
constexpr uint64_t kMinParallelDestinations = 2048;

}  // namespace

double LaborScale(std::span<const double> weights, uint32_t fanout, std::vector<double>& sorted) {
  sorted.assign(weights.begin(), weights.end());
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double rest = 0;  // the sum of the weights not saturated
  for (double w : sorted) rest += w;
  // With the j largest saturated, the others share fanout - j in proportion to their weights;
  // j grows until the largest of the others is not saturated.
  for (size_t j = 0;; ++j) {
    const double scale = (fanout - static_cast<double>(j)) / rest;
    if (j + 1 >= sorted.size() || scale * sorted[j] <= 1) return scale;
    rest -= sorted[j];
  }
}

void LaborImportance(std::span<const uint32_t> indptr, std::span<const uint32_t> candidates,
                     uint32_t fanout, int iterations, std::span<double> pi, std::span<double> scale,
                     unsigned threads) {
  const uint64_t num_dst = indptr.size() - 1;
  const unsigned workers = num_dst < kMinParallelDestinations ? 1u : threads;
  std::fill(pi.begin(), pi.end(), 1.0);
  auto solve = [&] {
    ParallelFor(workers, num_dst, [&](uint64_t begin, uint64_t end) {
      std::vector<double> weights, sorted;
      for (uint64_t d = begin; d < end; ++d) {
        const uint32_t e0 = indptr[d], e1 = indptr[d + 1];
        if (e1 - e0 <= fanout) {
          scale[d] = std::numeric_limits<double>::infinity();
          continue;
        }
        weights.resize(e1 - e0);
        for (uint32_t e = e0; e < e1; ++e) weights[e - e0] = pi[candidates[e]];
        scale[d] = LaborScale(weights, fanout, sorted);
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
