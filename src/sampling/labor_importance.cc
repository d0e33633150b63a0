#include "sampling/labor_importance.h"

#include <algorithm>
#include <limits>

#include "common/parallel.h"

namespace strata {
namespace {

constexpr double kConverged = 1e-4;

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
                     LaborImportanceScratch& scratch, unsigned threads) {
  const uint64_t num_dst = indptr.size() - 1;
  const uint64_t num_candidates = pi.size();
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
  if (steps == 0) return;
  // Each candidate's destinations (the transpose, by counting sort), so that a step's maximum
  // over them reads the destinations' scales, few enough to stay in cache, instead of updating
  // the candidates' array at random for every edge.
  std::vector<uint32_t>& at = scratch.destinations_at;
  std::vector<uint32_t>& destinations = scratch.destinations;
  at.assign(num_candidates + 1, 0);
  for (uint32_t t : candidates) ++at[t + 1];
  for (uint64_t t = 0; t < num_candidates; ++t) at[t + 1] += at[t];
  destinations.resize(candidates.size());
  scratch.next_slot.assign(at.begin(), at.end() - 1);
  for (uint64_t d = 0; d < num_dst; ++d) {
    for (uint32_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      destinations[scratch.next_slot[candidates[e]]++] = static_cast<uint32_t>(d);
    }
  }
  const unsigned candidate_workers = num_candidates < kMinParallelDestinations ? 1u : threads;
  double expected = static_cast<double>(num_candidates);
  for (int step = 0; step < steps; ++step) {
    // The probability that t is taken, max over its destinations of min(1, c_d pi_t), is
    // min(1, pi_t max c_d): multiplying by pi_t > 0 keeps the order, rounding included. A
    // candidate that no destination lists keeps its weight.
    ParallelFor(candidate_workers, num_candidates, [&](uint64_t begin, uint64_t end) {
      for (uint64_t t = begin; t < end; ++t) {
        if (at[t] == at[t + 1]) continue;
        double largest = 0;
        for (uint32_t k = at[t]; k < at[t + 1]; ++k)
          largest = std::max(largest, scale[destinations[k]]);
        pi[t] = std::min(1.0, pi[t] * largest);
      }
    });
    double next = 0;
    for (double p : pi) next += p;
    solve();
    if (iterations < 0 && expected - next <= kConverged * next) break;
    expected = next;
  }
}

}  // namespace strata
