// Edge weights (Block::edge_weights, LABOR's inverse inclusion probabilities) in SAGE's mean,
// GCN's sum and GAT's attention: gradients against finite differences, and an edge of integer
// weight w acting exactly as w copies of the edge.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "layer_check.h"
#include "nn/gat_conv.h"
#include "nn/gcn_conv.h"
#include "nn/sage_conv.h"
#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::RandomBlock;
using testing::RandomMatrix;

constexpr uint32_t kDst = 6, kSrc = 14;
constexpr size_t kIn = 5;

// A random block whose edges carry weights 1, 2 or 3.
Block WeightedBlock(uint64_t seed) {
  Block block = RandomBlock(kDst, kSrc, 4, seed);
  Rng rng(MixSeed(seed, 1));
  for (size_t e = 0; e < block.indices.size(); ++e) {
    block.edge_weights.push_back(static_cast<float>(1 + rng.Below(3)));
  }
  return block;
}

// The same edges without weights, each listed as many times as its weight.
Block RepeatedEdges(const Block& weighted) {
  Block block;
  block.src_nodes = weighted.src_nodes;
  block.dst_count = weighted.dst_count;
  block.indptr.push_back(0);
  for (uint32_t d = 0; d < weighted.num_dst(); ++d) {
    for (uint32_t e = weighted.indptr[d]; e < weighted.indptr[d + 1]; ++e) {
      for (float w = 0; w < weighted.edge_weights[e]; ++w) {
        block.indices.push_back(weighted.indices[e]);
      }
    }
    block.indptr.push_back(static_cast<uint32_t>(block.indices.size()));
  }
  return block;
}

std::vector<double> Norms() {
  std::vector<double> norm(kSrc);
  for (size_t v = 0; v < kSrc; ++v) norm[v] = 1.0 / std::sqrt(2.0 + static_cast<double>(v % 5));
  return norm;
}

enum class WeightedLayer { kSage, kGcn, kGat };

std::unique_ptr<BasicLayer<double>> MakeLayer(WeightedLayer kind, size_t out) {
  switch (kind) {
    case WeightedLayer::kSage:
      return std::make_unique<BasicSageConv<double>>(kIn, out, 3);
    case WeightedLayer::kGcn:
      return std::make_unique<BasicGcnConv<double>>(kIn, out, 3);
    case WeightedLayer::kGat:
      return std::make_unique<BasicGatConv<double>>(kIn, out, GatOptions{.heads = 2}, 3);
  }
  return nullptr;
}

struct WeightedCase {
  WeightedLayer kind;
  size_t out;  // 4 transforms SAGE and GCN first, 8 aggregates first
  const char* name;
};

class EdgeWeights : public ::testing::TestWithParam<WeightedCase> {};

TEST_P(EdgeWeights, BackwardMatchesFiniteDifferences) {
  const WeightedCase c = GetParam();
  Block block = WeightedBlock(11);
  MatrixD features = RandomMatrix<double>(kSrc, kIn, 12);
  std::vector<double> norm = Norms();
  auto layer = MakeLayer(c.kind, c.out);
  testing::CheckLayerGradients(
      *layer, block, features,
      c.kind == WeightedLayer::kGcn ? std::span<const double>(norm) : std::span<const double>());
}

TEST_P(EdgeWeights, IntegerWeightIsThatManyCopiesOfTheEdge) {
  const WeightedCase c = GetParam();
  const Block weighted = WeightedBlock(21);
  const Block repeated = RepeatedEdges(weighted);
  MatrixD features = RandomMatrix<double>(kSrc, kIn, 22);
  std::vector<double> norm = Norms();
  auto layer = MakeLayer(c.kind, c.out);
  MatrixD want, got;
  const std::span<const double> gcn_norm =
      c.kind == WeightedLayer::kGcn ? std::span<const double>(norm) : std::span<const double>();
  layer->Forward({CsrOf(repeated), features.span(), gcn_norm, false, 0}, want);
  layer->Forward({CsrOf(weighted), features.span(), gcn_norm, false, 0}, got);
  ASSERT_EQ(got.rows(), want.rows());
  for (size_t i = 0; i < want.rows(); ++i) {
    for (size_t j = 0; j < want.cols(); ++j) EXPECT_NEAR(got(i, j), want(i, j), 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layers, EdgeWeights,
    ::testing::Values(WeightedCase{WeightedLayer::kSage, 4, "SageTransformFirst"},
                      WeightedCase{WeightedLayer::kSage, 8, "SageAggregateFirst"},
                      WeightedCase{WeightedLayer::kGcn, 4, "GcnTransformFirst"},
                      WeightedCase{WeightedLayer::kGcn, 8, "GcnAggregateFirst"},
                      WeightedCase{WeightedLayer::kGat, 3, "Gat"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(EdgeWeights, MalformedWeightsAreRejected) {
  Block block = WeightedBlock(31);
  block.edge_weights.pop_back();
  EXPECT_THROW(CsrOf(block), Error);
}

}  // namespace
}  // namespace strata
