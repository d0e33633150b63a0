#include "nn/gcn_conv.h"

#include <gtest/gtest.h>

#include <set>

#include "layer_check.h"
#include "nn/gemm.h"
#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::RandomBlock;
using testing::RandomMatrix;

std::vector<double> RandomNorms(size_t n, uint64_t seed) {
  std::vector<double> norm(n);
  Rng rng(seed);
  for (double& v : norm) v = 1.0 / std::sqrt(1.0 + static_cast<double>(rng.Below(12)));
  return norm;
}

// Layer widths that make the layer take each order of its two products (gcn_conv.h): wide
// inputs into few outputs transform first, narrow inputs into many outputs aggregate first.
struct GcnWidths {
  size_t in, out;
};
constexpr GcnWidths kTransformFirst{5, 4}, kAggregateFirst{2, 8};

class GcnConvOrder : public ::testing::TestWithParam<GcnWidths> {};

TEST_P(GcnConvOrder, BackwardMatchesFiniteDifferences) {
  const GcnWidths w = GetParam();
  Block block = RandomBlock(6, 14, 4, 1);
  MatrixD features = RandomMatrix<double>(14, w.in, 2);
  std::vector<double> norm = RandomNorms(14, 3);
  BasicGcnConv<double> layer(w.in, w.out, 4);
  testing::CheckLayerGradients(layer, block, features, norm);
}

// With full neighbourhoods, a mini-batch GCN layer computes exactly the rows of Kipf and
// Welling's full-graph layer D^-1/2 (A + I) D^-1/2 X W + b, for any subset of destinations.
TEST_P(GcnConvOrder, FullNeighbourhoodsEqualFullGraphGcn) {
  const size_t in_dim = GetParam().in, out_dim = GetParam().out;
  const uint32_t n = 12;
  Rng rng(5);
  std::vector<std::set<uint32_t>> in(n);  // in-neighbours, symmetric, no self loops
  for (int k = 0; k < 30; ++k) {
    uint32_t a = rng.Below(n), b = rng.Below(n);
    if (a == b) continue;
    in[a].insert(b);
    in[b].insert(a);
  }
  in[7].clear();  // an isolated node
  for (uint32_t v = 0; v < n; ++v) in[v].erase(7);
  MatrixD x = RandomMatrix<double>(n, in_dim, 6);
  BasicGcnConv<double> layer(in_dim, out_dim, 7);
  auto params = layer.Parameters("");
  for (size_t j = 0; j < out_dim; ++j) params[1].value(0, j) = 0.5 * j;

  // Dense full-graph reference.
  MatrixD a_hat(n, n);
  for (uint32_t d = 0; d < n; ++d) {
    for (uint32_t s : in[d])
      a_hat(d, s) = 1 / std::sqrt((in[s].size() + 1.0) * (in[d].size() + 1.0));
    a_hat(d, d) = 1.0 / (in[d].size() + 1.0);
  }
  MatrixD ax(n, in_dim), want(n, out_dim);
  Gemm<double>(Trans::kNo, Trans::kNo, 1, a_hat.span(), x.span(), 0, ax.span());
  Gemm<double>(Trans::kNo, Trans::kNo, 1, ax.span(), params[0].value, 0, want.span());

  // Block: destinations 9, 7, 2, 4, then every other in-neighbour as it first appears.
  std::vector<uint32_t> order = {9, 7, 2, 4};
  Block block;
  block.dst_count = static_cast<uint32_t>(order.size());
  std::vector<int> local(n, -1);
  for (uint32_t i = 0; i < order.size(); ++i) local[order[i]] = static_cast<int>(i);
  block.indptr.push_back(0);
  for (uint32_t d : std::vector<uint32_t>(order)) {
    for (uint32_t s : in[d]) {
      if (local[s] < 0) {
        local[s] = static_cast<int>(order.size());
        order.push_back(s);
      }
      block.indices.push_back(static_cast<uint32_t>(local[s]));
    }
    block.indptr.push_back(static_cast<uint32_t>(block.indices.size()));
  }
  for (uint32_t v : order) block.src_nodes.push_back(v);
  MatrixD features(order.size(), in_dim);
  std::vector<double> norm;
  for (size_t i = 0; i < order.size(); ++i) {
    for (size_t j = 0; j < in_dim; ++j) features(i, j) = x(order[i], j);
    norm.push_back(1 / std::sqrt(in[order[i]].size() + 1.0));
  }
  MatrixD out;
  layer.Forward({CsrOf(block), features.span(), norm, false, 0}, out);
  for (uint32_t i = 0; i < block.dst_count; ++i) {
    for (size_t j = 0; j < out_dim; ++j) {
      EXPECT_NEAR(out(i, j), want(order[i], j) + 0.5 * j, 1e-12);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, GcnConvOrder, ::testing::Values(kTransformFirst, kAggregateFirst),
                         [](const auto& info) {
                           return info.param.in > info.param.out ? "TransformFirst"
                                                                 : "AggregateFirst";
                         });

TEST(GcnConv, RejectsMissingNormalisation) {
  Block block = RandomBlock(3, 6, 2, 8);
  Matrix features(6, 2);
  GcnConv layer(2, 2, 1);
  std::vector<float> short_norm(5, 1.0f);
  Matrix out;
  EXPECT_THROW(layer.Forward({CsrOf(block), features.span(), short_norm, false, 0}, out), Error);
}

}  // namespace
}  // namespace strata
