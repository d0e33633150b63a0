// LaborImportance computes LABOR-*'s sampling probabilities (Balın & Çatalyürek, "Layer-Neighbor
// Sampling", NeurIPS 2023, §3.2): a weight pi_t per candidate source t and a scale c_d per
// destination d such that d keeps its in-neighbour t with probability min(1, c_d * pi_t), and
// those probabilities sum to min(fanout, in-degree) over d's in-neighbours, so each destination
// still keeps `fanout` neighbours in expectation. A source is then taken by the layer with
// probability min(1, pi_t * max_d c_d) over the destinations that could take it.
//
// LABOR-0 is pi = 1 (c_d = fanout / in-degree). Each fixed-point step sets pi_t to that
// probability of t being taken, then solves every c_d again for the new pi: destinations shift
// their picks onto sources that other destinations take anyway, and the expected number of
// distinct sources falls. `iterations` steps are run, or with iterations < 0 steps until the
// expected count stops falling by more than 1e-4 of itself (at most kMaxLaborIterations).
//
// Input, per destination d, its in-neighbours as candidate numbers: candidates[indptr[d] ..
// indptr[d + 1]), each < pi.size(). A destination whose in-degree is at most the fanout keeps
// every in-neighbour (c_d = +inf), and its sources are certainly taken (pi_t = 1).
//
// Deterministic: the results depend on the inputs only, not on `threads`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

constexpr int kMaxLaborIterations = 100;
// Below this many destinations (or candidates) a layer's work runs on the calling thread; the
// neighbour sampler uses the same threshold.
inline constexpr uint64_t kMinParallelDestinations = 2048;

// Memory LaborImportance reuses from one call to the next: each candidate's destinations.
struct LaborImportanceScratch {
  std::vector<uint32_t> destinations_at;  // per candidate, where its destinations start
  std::vector<uint32_t> destinations;
  std::vector<uint32_t> next_slot;
};

// Writes pi (one per candidate, in (0, 1]) and scale (one per destination).
void LaborImportance(std::span<const uint32_t> indptr, std::span<const uint32_t> candidates,
                     uint32_t fanout, int iterations, std::span<double> pi, std::span<double> scale,
                     LaborImportanceScratch& scratch, unsigned threads);

// The scale c with sum over `weights` of min(1, c * w) == fanout, for fanout < weights.size()
// and every weight > 0 (water-filling: the largest weights saturate first).
double LaborScale(std::span<const double> weights, uint32_t fanout);

}  // namespace strata
