// LaborVariates are the random variates of layer-neighbour sampling (LABOR: M. F. Balın and
// Ü. V. Çatalyürek, "Layer-Neighbor Sampling — Defusing Neighborhood Explosion in GNNs",
// NeurIPS 2023): one uniform r_t in [0, 1) per candidate source t, shared by every
// destination of a layer of a batch. A destination of in-degree d keeps in-neighbour t when
// r_t < fanout / d, so it keeps `fanout` neighbours in expectation, each with probability
// min(1, fanout / d) as neighbour sampling would, but destinations agree on whom they keep.
//
// Dependent mini-batches (Balın et al., "Cooperative Minibatching in Graph Neural Networks",
// arXiv:2310.12403): with a dependency of K batches, r_t = Φ(cos(πα/2) z_t(j) + sin(πα/2)
// z_t(j + 1)) for batch b, j = b / K, α = (b mod K) / K, z_t(j) standard normals: each r_t is
// still uniform, and consecutive batches' variates, hence their picks, overlap. K = 1 makes
// every batch independent (then r_t is a hashed uniform directly).
//
// Invariant: r_t depends on (seed, epoch, layer, batch / K, batch mod K, t) only.
#pragma once

#include <cstdint>

namespace strata {

class LaborVariates {
 public:
  // The variates of layer `layer` of batch `batch` of `epoch` under a dependency of
  // `dependency` (>= 1) batches; `seed` is the sampler's.
  LaborVariates(uint64_t seed, uint64_t epoch, uint64_t layer, uint64_t batch, uint32_t dependency);

  // The variate r_node, uniform in [0, 1).
  double operator()(uint64_t node) const;
  // The same decision for less work: r_t < p exactly when Key(t) < KeyThreshold(p), where
  // Key is r_t itself for independent batches and the normal behind it otherwise, so the
  // normal CDF is inverted once per destination instead of evaluated once per edge.
  double Key(uint64_t node) const;
  double KeyThreshold(double probability) const;

 private:
  double Normal(uint64_t window, uint64_t node) const;

  uint64_t seed_;
  uint64_t window_;
  bool independent_;
  double first_weight_ = 1, second_weight_ = 0;
};

// Φ^-1(p) for p in (0, 1), to about double precision.
double NormalQuantile(double p);

}  // namespace strata
