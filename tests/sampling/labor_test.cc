// Layer-neighbour sampling (LABOR-0): each edge is kept with probability min(1, fanout /
// in-degree), so a seed keeps `fanout` neighbours in expectation; seeds sharing in-neighbours
// agree on whom they keep, so a layer touches fewer distinct sources than neighbour sampling;
// the same seed gives the same batches; the variates are uniform, and with a batch dependency
// consecutive batches' variates are correlated where independent batches' are not.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "sampling/labor_variates.h"
#include "sampling/sample_bench.h"
#include "sampling/sampled_batch_expectations.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "strata/neighbor_sampler.h"
#include "test_util.h"

namespace strata {
namespace {

// Seeds 0, 1, 2 share in-neighbours 10..49 (degree 40); the other nodes have none.
CscGraph SharedNeighbourhoods(MemoryBudget& budget) {
  constexpr uint64_t kNodes = 50, kShared = 40;
  ChargedArray<uint64_t> indptr(budget, kNodes + 1, "test graph");
  ChargedArray<uint32_t> indices(budget, 3 * kShared, "test graph");
  indptr[0] = 0;
  for (uint64_t v = 0; v < kNodes; ++v) {
    const uint64_t degree = v < 3 ? kShared : 0;
    for (uint64_t k = 0; k < degree; ++k) indices[indptr[v] + k] = static_cast<uint32_t>(10 + k);
    indptr[v + 1] = indptr[v] + degree;
  }
  return CscGraph(std::move(indptr), std::move(indices), budget);
}

TEST(Labor, EachEdgeIsKeptWithProbabilityFanoutOverDegree) {
  MemoryBudget budget(64 << 20);
  const CscGraph graph = SharedNeighbourhoods(budget);
  NeighborSampler sampler(graph, {0, 1, 2}, {5}, 3, 7, budget, 1);
  sampler.set_labor({.enabled = true});
  constexpr int kBatches = 4000;
  std::vector<double> kept(50, 0);  // per source, how often seed 0 kept it
  double picks = 0;
  for (int e = 0; e < kBatches; ++e) {
    const SampledBatch batch = sampler.Sample(e, 0);
    const Block& block = batch.blocks[0];
    ExpectValidBatch(graph, batch, {5}, sampler.BatchSeeds(e, 0), /*exact_fanouts=*/false);
    for (uint32_t d = 0; d < block.num_dst(); ++d) {
      picks += block.indptr[d + 1] - block.indptr[d];
      if (block.src_nodes[d] != 0) continue;
      for (uint32_t k = block.indptr[d]; k < block.indptr[d + 1]; ++k) {
        ++kept[block.src_nodes[block.indices[k]]];
      }
    }
  }
  // p = 5 / 40; each count is Binomial(4000, p): mean 500, sd 20.9. Five sd either way.
  const double p = 5.0 / 40, sd = std::sqrt(kBatches * p * (1 - p));
  for (uint64_t t = 10; t < 50; ++t) {
    EXPECT_NEAR(kept[t], kBatches * p, 5 * sd) << "source " << t;
  }
  // Each seed keeps 5 in expectation: the mean over 12,000 seed draws within 0.1.
  EXPECT_NEAR(picks / (3.0 * kBatches), 5.0, 0.1);
}

TEST(Labor, SeedsSharingNeighboursTouchFewerSourcesThanNeighbourSampling) {
  MemoryBudget budget(64 << 20);
  const CscGraph graph = SharedNeighbourhoods(budget);
  NeighborSampler uniform(graph, {0, 1, 2}, {5}, 3, 7, budget, 1);
  NeighborSampler labor(graph, {0, 1, 2}, {5}, 3, 7, budget, 1);
  labor.set_labor({.enabled = true});
  double uniform_sources = 0, labor_sources = 0;
  for (int e = 0; e < 200; ++e) {
    // Sources beyond the three seeds themselves.
    uniform_sources += uniform.Sample(e, 0).blocks[0].num_src() - 3;
    const SampledBatch batch = labor.Sample(e, 0);
    labor_sources += batch.blocks[0].num_src() - 3;
    // One threshold for all three seeds, one variate per source: the same picks.
    const Block& block = batch.blocks[0];
    for (uint32_t d = 1; d < 3; ++d) {
      EXPECT_EQ(block.indptr[d + 1] - block.indptr[d], block.indptr[1] - block.indptr[0]);
    }
  }
  // Neighbour sampling: three independent draws of 5 from 40 (about 13.5 distinct); LABOR:
  // one set of about 5.
  EXPECT_LT(labor_sources, 0.5 * uniform_sources);
}

TEST(Labor, SameSeedSameBatchesWhateverTheThreads) {
  testing::ScratchDir dir;
  GenerateDataset(testing::SmallGraph(dir / "g", 5000, 8, 4, 12, 3));
  MemoryBudget budget(256 << 20);
  const Dataset dataset = Dataset::Open(dir / "g");
  const CscGraph graph(dataset, budget);
  const std::vector<uint64_t> train = dataset.ReadSplit(Split::kTrain);
  for (uint32_t dependency : {1u, 4u}) {
    NeighborSampler one(graph, train, {5, 5}, 64, 9, budget, 1);
    NeighborSampler two(graph, train, {5, 5}, 64, 9, budget, 2);
    one.set_labor({.enabled = true, .batch_dependency = dependency});
    two.set_labor({.enabled = true, .batch_dependency = dependency});
    for (uint64_t b = 0; b < 4; ++b) {
      const SampledBatch x = one.Sample(1, b);
      ExpectSameBatch(x, two.Sample(1, b));
      ExpectValidBatch(graph, x, {5, 5}, one.BatchSeeds(1, b), /*exact_fanouts=*/false);
    }
  }
}

// The variates of one node over consecutive batches: uniform in every batch, correlated from
// one batch to the next with a dependency, not without.
TEST(LaborVariates, UniformAndCorrelatedAcrossDependentBatches) {
  constexpr int kNodes = 20000;
  for (uint32_t dependency : {1u, 16u}) {
    double sum = 0, sum_sq = 0, product = 0;
    for (uint64_t t = 0; t < kNodes; ++t) {
      const double a = LaborVariates(5, 0, 0, 3, dependency)(t);
      const double b = LaborVariates(5, 0, 0, 4, dependency)(t);
      sum += a;
      sum_sq += a * a;
      product += (a - 0.5) * (b - 0.5);
    }
    const double mean = sum / kNodes, variance = sum_sq / kNodes - mean * mean;
    EXPECT_NEAR(mean, 0.5, 0.01) << dependency;
    EXPECT_NEAR(variance, 1.0 / 12, 0.005) << dependency;
    const double correlation = product / kNodes / (1.0 / 12);
    if (dependency == 1) {
      EXPECT_NEAR(correlation, 0, 0.05);
    } else {
      EXPECT_GT(correlation, 0.9);
    }
  }
}

// On a generated power-law graph: LABOR samples fewer distinct input rows than neighbour
// sampling, and consecutive dependent batches share more of them than independent ones.
TEST(Labor, DependentBatchesShareMoreRowsThanIndependentOnes) {
  testing::ScratchDir dir;
  GenerateOptions g = testing::SmallGraph(dir / "g", 20000, 4, 4, 30, 5);
  g.train_ratio = 0.3;
  GenerateDataset(g);
  SampleBenchOptions o;
  o.dataset = dir / "g";
  o.fanouts = {5, 5};
  o.batch_size = 100;
  o.batches = 20;
  o.memory_budget_bytes = 256 << 20;
  const auto uniform = RunSampleBench(o);
  o.labor = {.enabled = true, .batch_dependency = 1};
  const auto independent = RunSampleBench(o);
  o.labor.batch_dependency = 64;
  const auto dependent = RunSampleBench(o);
  EXPECT_LT(independent["input_nodes_per_batch_mean"].get<double>(),
            uniform["input_nodes_per_batch_mean"].get<double>());
  EXPECT_GT(dependent["consecutive_input_overlap"].get<double>(),
            independent["consecutive_input_overlap"].get<double>());
}

// Φ^-1 inverts the CDF to near double precision, so a key test decides as the variate would.
TEST(LaborVariates, NormalQuantileInvertsTheNormalCdf) {
  for (double p : {1e-9, 1e-4, 0.02, 0.1, 0.25, 0.5, 0.6, 0.9, 0.98, 0.9999}) {
    const double x = NormalQuantile(p);
    EXPECT_NEAR(0.5 * std::erfc(-x / std::sqrt(2.0)), p, 1e-12 + 1e-10 * p) << p;
  }
  const LaborVariates variates(5, 0, 0, 3, 16);
  for (uint64_t t = 0; t < 1000; ++t) {
    for (double p : {0.1, 0.5, 0.9}) {
      EXPECT_EQ(variates(t) < p, variates.Key(t) < variates.KeyThreshold(p)) << t << " " << p;
    }
  }
}

TEST(Labor, BadOptionsAreOneInputError) {
  EXPECT_TRUE(ParseLaborOptions("labor", 8).enabled);
  EXPECT_FALSE(ParseLaborOptions("neighbor", 1).enabled);
  EXPECT_THROW(ParseLaborOptions("ladies", 1), Error);
  EXPECT_THROW(ParseLaborOptions("labor", 0), Error);
  EXPECT_THROW(ParseLaborOptions("neighbor", 4), Error);
}

}  // namespace
}  // namespace strata
