// LABOR-* (sampling/labor_importance.h): every destination still keeps `fanout` neighbours in
// expectation, the expected number of distinct sources falls with each fixed-point step, the
// sampler keeps each edge with the computed probability and weighs it by the inverse, so the
// weighted count of a destination's kept edges estimates its in-degree without bias.
#include "sampling/labor_importance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sampling/sampled_batch_expectations.h"
#include "strata/error.h"
#include "strata/graph.h"
#include "strata/neighbor_sampler.h"

namespace strata {
namespace {

constexpr uint32_t kFanout = 5;
constexpr uint64_t kSeeds = 6, kNodes = 100;

// Seed s (0..5) has the 8 (s + 1) in-neighbours 10 + 6s, 11 + 6s, ...: overlapping ranges of
// growing size, so that the seeds' LABOR-0 probabilities differ and importance can shift them.
uint64_t FirstNeighbour(uint64_t s) { return 10 + 6 * s; }
uint64_t Degree(uint64_t s) { return 8 * (s + 1); }

CscGraph Overlapping(MemoryBudget& budget) {
  uint64_t edges = 0;
  for (uint64_t s = 0; s < kSeeds; ++s) edges += Degree(s);
  ChargedArray<uint64_t> indptr(budget, kNodes + 1, "test graph");
  ChargedArray<uint32_t> indices(budget, edges, "test graph");
  indptr[0] = 0;
  for (uint64_t v = 0; v < kNodes; ++v) {
    const uint64_t degree = v < kSeeds ? Degree(v) : 0;
    for (uint64_t k = 0; k < degree; ++k) {
      indices[indptr[v] + k] = static_cast<uint32_t>(FirstNeighbour(v) + k);
    }
    indptr[v + 1] = indptr[v] + degree;
  }
  return CscGraph(std::move(indptr), std::move(indices), budget);
}

// The seeds' in-neighbours as LaborImportance's input, candidates numbered by node id.
struct Problem {
  std::vector<uint32_t> indptr{0};
  std::vector<uint32_t> candidates;
  Problem() {
    for (uint64_t s = 0; s < kSeeds; ++s) {
      for (uint64_t k = 0; k < Degree(s); ++k) {
        candidates.push_back(static_cast<uint32_t>(FirstNeighbour(s) + k));
      }
      indptr.push_back(static_cast<uint32_t>(candidates.size()));
    }
  }
};

struct Probabilities {
  std::vector<double> pi = std::vector<double>(kNodes);
  std::vector<double> scale = std::vector<double>(kSeeds);
  double Of(uint64_t seed, uint64_t source) const {
    return std::min(1.0, scale[seed] * pi[source]);
  }
  // The expected number of distinct sources the seeds take.
  double ExpectedSources() const {
    double sum = 0;
    for (uint64_t t = 0; t < kNodes; ++t) {
      double taken = 0;
      for (uint64_t s = 0; s < kSeeds; ++s) {
        if (t >= FirstNeighbour(s) && t < FirstNeighbour(s) + Degree(s)) {
          taken = std::max(taken, Of(s, t));
        }
      }
      sum += taken;
    }
    return sum;
  }
};

Probabilities Solve(int iterations, unsigned threads = 1) {
  const Problem problem;
  Probabilities p;
  LaborImportanceScratch scratch;
  LaborImportance(problem.indptr, problem.candidates, kFanout, iterations, p.pi, p.scale, scratch,
                  threads);
  return p;
}

TEST(LaborImportance, ScaleWaterFillsToTheFanout) {
  const std::vector<double> weights{4, 1, 1, 1, 1, 1, 1, 0.5};
  const double c = LaborScale(weights, 3);
  double sum = 0;
  for (double w : weights) sum += std::min(1.0, c * w);
  EXPECT_NEAR(sum, 3.0, 1e-12);
  EXPECT_GE(c * 4, 1.0);  // the heaviest saturates
  // Equal weights: LABOR-0's fanout / degree.
  EXPECT_DOUBLE_EQ(LaborScale(std::vector<double>(8, 1.0), 2), 0.25);
  // Saturation that cascades: 10 saturates first, then 5 once the scale grows.
  const std::vector<double> cascade{10, 5, 1, 1, 1, 1};
  const double cc = LaborScale(cascade, 3);
  double total = 0;
  for (double w : cascade) total += std::min(1.0, cc * w);
  EXPECT_NEAR(total, 3.0, 1e-12);
  EXPECT_GE(cc * 5, 1.0);
  // A weight at 1 / scale up to rounding (as LABOR-*'s fixed point makes them) ends the
  // water-filling instead of flipping in and out of the saturated set.
  const std::vector<double> boundary{1.0 / 3, 1.0 / 3, 1.0 / 3, 0.1 / 3, 0.2 / 3, 0.3 / 3};
  const double cb = LaborScale(boundary, 2);
  double sum_boundary = 0;
  for (double w : boundary) sum_boundary += std::min(1.0, cb * w);
  EXPECT_NEAR(sum_boundary, 2.0, 1e-9);
}

TEST(LaborImportance, EverySeedKeepsTheFanoutInExpectationAndSourcesFall) {
  double previous = 0;
  for (int iterations : {0, 1, 3, -1}) {
    const Probabilities p = Solve(iterations);
    for (uint64_t s = 0; s < kSeeds; ++s) {
      if (Degree(s) <= kFanout) continue;
      double expected = 0;
      for (uint64_t k = 0; k < Degree(s); ++k) expected += p.Of(s, FirstNeighbour(s) + k);
      EXPECT_NEAR(expected, kFanout, 1e-9) << "seed " << s << ", " << iterations << " steps";
    }
    const double sources = p.ExpectedSources();
    if (iterations != 0) {
      EXPECT_LT(sources, previous) << iterations << " steps";
    }
    previous = sources;
  }
  // LABOR-0 is fanout / degree everywhere.
  const Probabilities zero = Solve(0);
  EXPECT_DOUBLE_EQ(zero.Of(2, FirstNeighbour(2)), 5.0 / 24);
}

TEST(LaborImportance, ThreadsDoNotChangeTheResult) {
  const Probabilities one = Solve(-1, 1), four = Solve(-1, 4);
  EXPECT_EQ(one.pi, four.pi);
  EXPECT_EQ(one.scale, four.scale);
}

// Every kept edge carries 1 / its probability; over many batches each edge is kept as often as
// that probability says, each seed keeps the fanout on average, and the weighted count of a
// seed's kept edges averages its in-degree (the Horvitz-Thompson estimate of it).
TEST(LaborImportance, SamplerKeepsEachEdgeWithItsProbabilityAndWeighsItByTheInverse) {
  constexpr int kSteps = 3, kBatches = 4000;
  MemoryBudget budget(64 << 20);
  const CscGraph graph = Overlapping(budget);
  std::vector<uint64_t> seeds;
  for (uint64_t s = 0; s < kSeeds; ++s) seeds.push_back(s);
  NeighborSampler sampler(graph, seeds, {static_cast<int>(kFanout)}, kSeeds, 7, budget, 1);
  sampler.set_labor({.enabled = true, .importance = kSteps});
  const Probabilities p = Solve(kSteps);
  std::vector<std::vector<double>> kept(kSeeds, std::vector<double>(kNodes, 0));
  std::vector<double> weighted(kSeeds, 0), picks(kSeeds, 0);
  for (int e = 0; e < kBatches; ++e) {
    const SampledBatch batch = sampler.Sample(e, 0);
    ExpectValidBatch(graph, batch, {static_cast<int>(kFanout)}, sampler.BatchSeeds(e, 0),
                     /*exact_fanouts=*/false);
    const Block& block = batch.blocks[0];
    ASSERT_EQ(block.edge_weights.size(), block.indices.size());
    for (uint32_t d = 0; d < block.num_dst(); ++d) {
      const uint64_t s = block.src_nodes[d];
      for (uint32_t k = block.indptr[d]; k < block.indptr[d + 1]; ++k) {
        const uint64_t t = block.src_nodes[block.indices[k]];
        ++kept[s][t];
        ++picks[s];
        weighted[s] += block.edge_weights[k];
        ASSERT_EQ(block.edge_weights[k], static_cast<float>(1.0 / p.Of(s, t)));
      }
    }
  }
  for (uint64_t s = 0; s < kSeeds; ++s) {
    for (uint64_t k = 0; k < Degree(s); ++k) {
      const uint64_t t = FirstNeighbour(s) + k;
      const double q = p.Of(s, t), sd = std::sqrt(kBatches * q * (1 - q));
      EXPECT_NEAR(kept[s][t], kBatches * q, 5 * sd + 1e-9) << "seed " << s << " source " << t;
    }
    EXPECT_NEAR(picks[s] / kBatches, kFanout, 0.15) << "seed " << s;
    EXPECT_NEAR(weighted[s] / kBatches, static_cast<double>(Degree(s)), 0.05 * Degree(s))
        << "seed " << s;
  }
}

TEST(LaborImportance, SamplerTouchesFewerSourcesThanLaborZero) {
  MemoryBudget budget(64 << 20);
  const CscGraph graph = Overlapping(budget);
  std::vector<uint64_t> seeds;
  for (uint64_t s = 0; s < kSeeds; ++s) seeds.push_back(s);
  double sources[2] = {0, 0};
  for (int star = 0; star < 2; ++star) {
    NeighborSampler sampler(graph, seeds, {static_cast<int>(kFanout)}, kSeeds, 7, budget, 1);
    sampler.set_labor({.enabled = true, .importance = star ? -1 : 0});
    for (int e = 0; e < 500; ++e) sources[star] += sampler.Sample(e, 0).blocks[0].num_src();
  }
  EXPECT_LT(sources[1], 0.95 * sources[0]);
}

TEST(LaborImportance, OptionsParse) {
  EXPECT_EQ(ParseLaborOptions("labor", 1, "star").importance, -1);
  EXPECT_EQ(ParseLaborOptions("labor", 4, "3").importance, 3);
  EXPECT_EQ(ParseLaborOptions("labor", 1).importance, 0);
  EXPECT_THROW(ParseLaborOptions("neighbor", 1, "2"), Error);
  EXPECT_THROW(ParseLaborOptions("labor", 1, "many"), Error);
  EXPECT_THROW(ParseLaborOptions("labor", 1, "101"), Error);
  EXPECT_THROW(ParseLaborOptions("labor", 1, "-1"), Error);
}

}  // namespace
}  // namespace strata
