#include "nn/gat_conv.h"

#include <gtest/gtest.h>

#include "layer_check.h"
#include "nn_test_util.h"

namespace strata {
namespace {

using testing::RandomBlock;
using testing::RandomMatrix;

TEST(GatConv, BackwardMatchesFiniteDifferencesConcatenatedHeads) {
  Block block = RandomBlock(6, 14, 4, 1);
  MatrixD features = RandomMatrix<double>(14, 5, 2);
  BasicGatConv<double> layer(5, 2, {.heads = 3, .concat_heads = true}, 3);
  testing::CheckLayerGradients(layer, block, features);
}

TEST(GatConv, BackwardMatchesFiniteDifferencesAveragedHeads) {
  Block block = RandomBlock(6, 14, 4, 4);
  MatrixD features = RandomMatrix<double>(14, 5, 5);
  BasicGatConv<double> layer(5, 3, {.heads = 2, .concat_heads = false}, 6);
  testing::CheckLayerGradients(layer, block, features);
}

TEST(GatConv, BackwardMatchesFiniteDifferencesWithAttentionDropout) {
  Block block = RandomBlock(6, 14, 4, 7);
  MatrixD features = RandomMatrix<double>(14, 4, 8);
  BasicGatConv<double> layer(4, 2, {.heads = 2, .concat_heads = true, .attention_dropout = 0.3}, 9);
  // The same seed draws the same mask in every forward of the finite differences.
  testing::CheckLayerGradients(layer, block, features, {}, /*training=*/true, /*seed=*/77);
}

// Forward against the definition, with the self loop added to every destination.
TEST(GatConv, ForwardMatchesDefinitionWithSelfLoops) {
  Block block = RandomBlock(5, 11, 4, 10);
  const size_t in = 4, f = 3, heads = 2;
  MatrixD x = RandomMatrix<double>(11, in, 11);
  BasicGatConv<double> layer(in, f, {.heads = heads, .concat_heads = true}, 12);
  auto params = layer.Parameters("");
  const auto& w = params[0].value;
  const auto& al = params[1].value;
  const auto& ar = params[2].value;
  for (size_t j = 0; j < heads * f; ++j) params[3].value(0, j) = 0.01 * j;
  MatrixD out;
  layer.Forward({CsrOf(block), x.span(), {}, false, 0}, out);

  MatrixD wh(11, heads * f);
  for (size_t v = 0; v < 11; ++v) {
    for (size_t o = 0; o < heads * f; ++o) {
      for (size_t i = 0; i < in; ++i) wh(v, o) += x(v, i) * w(i, o);
    }
  }
  for (uint32_t d = 0; d < 5; ++d) {
    std::vector<uint32_t> sources(block.indices.begin() + block.indptr[d],
                                  block.indices.begin() + block.indptr[d + 1]);
    sources.push_back(d);
    for (size_t h = 0; h < heads; ++h) {
      std::vector<double> e;
      double er = 0;
      for (size_t j = 0; j < f; ++j) er += ar(h, j) * wh(d, h * f + j);
      for (uint32_t s : sources) {
        double el = 0;
        for (size_t j = 0; j < f; ++j) el += al(h, j) * wh(s, h * f + j);
        double z = el + er;
        e.push_back(z > 0 ? z : 0.2 * z);
      }
      double total = 0;
      for (double& v : e) total += (v = std::exp(v));
      for (size_t j = 0; j < f; ++j) {
        double want = 0.01 * (h * f + j);
        for (size_t k = 0; k < sources.size(); ++k)
          want += e[k] / total * wh(sources[k], h * f + j);
        EXPECT_NEAR(out(d, h * f + j), want, 1e-12);
      }
    }
  }
  // Destination 1 has no sampled neighbours: it attends only to itself.
  for (size_t j = 0; j < heads * f; ++j) EXPECT_NEAR(out(1, j), wh(1, j) + 0.01 * j, 1e-12);
}

TEST(GatConv, AveragedHeadsAreTheMeanOfConcatenatedHeads) {
  Block block = RandomBlock(8, 20, 5, 13);
  Matrix x = RandomMatrix<float>(20, 6, 14);
  GatConv concat(6, 4, {.heads = 3, .concat_heads = true}, 15);
  GatConv mean(6, 4, {.heads = 3, .concat_heads = false}, 15);  // same seed, same weights
  Matrix a, b;
  concat.Forward({CsrOf(block), x.span(), {}, false, 0}, a);
  mean.Forward({CsrOf(block), x.span(), {}, false, 0}, b);
  ASSERT_EQ(b.cols(), 4u);
  for (size_t d = 0; d < 8; ++d) {
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(b(d, j), (a(d, j) + a(d, 4 + j) + a(d, 8 + j)) / 3, 1e-5);
    }
  }
}

}  // namespace
}  // namespace strata
