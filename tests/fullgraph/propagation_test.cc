// The full graph's propagation Â and its transpose against a dense Â built from the definition,
// on a directed graph (so Âᵀ differs from Â), and bit-identical whatever the blocks and threads.
#include "fullgraph/propagation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace strata {
namespace {

constexpr uint64_t kGraphNodes = 600;
// Three cache lines, the last partial: on the whole graph (~6,000 edges) 8 threads cut the
// transposed scatter's rows and columns both (ForScatterTiles: 4 row ranges × 2 column ranges).
constexpr size_t kCols = 40;

struct Graph {
  std::vector<uint64_t> indptr{0};
  std::vector<std::byte> neighbours;  // ids of `id_bytes` each
  std::vector<std::vector<uint64_t>> in;
  std::vector<float> norm;
  uint32_t id_bytes = 4;
};

Graph RandomDirectedGraph(uint32_t id_bytes) {
  std::mt19937 rng(5);
  Graph g;
  g.id_bytes = id_bytes;
  g.in.resize(kGraphNodes);
  for (uint64_t v = 0; v < kGraphNodes; ++v) {
    for (uint64_t u = 0; u < kGraphNodes; ++u) {
      if (u != v && rng() % 60 == 0) g.in[v].push_back(u);
    }
    for (uint64_t u : g.in[v]) {
      const size_t at = g.neighbours.size();
      g.neighbours.resize(at + id_bytes);
      std::memcpy(g.neighbours.data() + at, &u, id_bytes);  // little-endian
    }
    g.indptr.push_back(g.indptr.back() + g.in[v].size());
    g.norm.push_back(static_cast<float>(1 / std::sqrt(g.in[v].size() + 1.0)));
  }
  return g;
}

std::vector<float> RandomMatrix(uint64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> m(rows * kCols);
  for (float& x : m) x = value(rng);
  return m;
}

// Â, dense, from the definition: Â_ij = norm_i norm_j for j -> i and for i = j.
std::vector<double> DenseAdjacency(const Graph& g) {
  std::vector<double> a(kGraphNodes * kGraphNodes, 0.0);
  for (uint64_t i = 0; i < kGraphNodes; ++i) {
    a[i * kGraphNodes + i] = double{g.norm[i]} * g.norm[i];
    for (uint64_t j : g.in[i]) a[i * kGraphNodes + j] += double{g.norm[i]} * g.norm[j];
  }
  return a;
}

// Runs `fn(block)` over blocks of `rows_per_block` rows, each with its own rows' offsets only
// (as the runner's pieces have).
template <typename Fn>
void ForBlocks(const Graph& g, uint64_t rows_per_block, Fn&& fn) {
  for (uint64_t begin = 0; begin < kGraphNodes; begin += rows_per_block) {
    const uint64_t end = std::min(kGraphNodes, begin + rows_per_block);
    const std::vector<uint64_t> offsets(g.indptr.begin() + begin, g.indptr.begin() + end + 1);
    fn(AdjacencyBlock{{begin, end},
                      {offsets, begin},
                      g.neighbours.data() + g.indptr[begin] * g.id_bytes,
                      g.id_bytes,
                      kGraphNodes});
  }
}

std::vector<float> PropagateInBlocks(const Graph& g, const std::vector<float>& in,
                                     uint64_t rows_per_block, unsigned threads) {
  std::vector<float> out(kGraphNodes * kCols, NAN);
  ForBlocks(g, rows_per_block, [&](const AdjacencyBlock& b) {
    Propagate(
        b, PropagationWeights::Gcn(g.norm), MatrixSpan<const float>(in.data(), kGraphNodes, kCols),
        MatrixSpan<float>(out.data() + b.rows.begin * kCols, b.rows.end - b.rows.begin, kCols),
        threads);
  });
  return out;
}

std::vector<float> TransposedInBlocks(const Graph& g, const std::vector<float>& grad_out,
                                      uint64_t rows_per_block, unsigned threads) {
  std::vector<float> grad_in(kGraphNodes * kCols, 0.0f);
  ForBlocks(g, rows_per_block, [&](const AdjacencyBlock& b) {
    PropagateTransposed(b, PropagationWeights::Gcn(g.norm),
                        MatrixSpan<const float>(grad_out.data() + b.rows.begin * kCols,
                                                b.rows.end - b.rows.begin, kCols),
                        MatrixSpan<float>(grad_in.data(), kGraphNodes, kCols), threads);
  });
  return grad_in;
}

class GcnPropagation : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GcnPropagation, EqualsTheDenseNormalisedAdjacency) {
  const Graph g = RandomDirectedGraph(GetParam());
  const std::vector<float> x = RandomMatrix(kGraphNodes, 1);
  const std::vector<float> forward = PropagateInBlocks(g, x, kGraphNodes, 1);
  const std::vector<float> backward = TransposedInBlocks(g, x, kGraphNodes, 1);
  const std::vector<double> a = DenseAdjacency(g);
  for (uint64_t i = 0; i < kGraphNodes; ++i) {
    for (size_t c = 0; c < kCols; ++c) {
      double ax = 0, atx = 0;
      for (uint64_t j = 0; j < kGraphNodes; ++j) {
        ax += a[i * kGraphNodes + j] * x[j * kCols + c];
        atx += a[j * kGraphNodes + i] * x[j * kCols + c];
      }
      ASSERT_NEAR(forward[i * kCols + c], ax, 1e-5) << "row " << i;
      ASSERT_NEAR(backward[i * kCols + c], atx, 1e-5) << "row " << i;
    }
  }
}

TEST_P(GcnPropagation, BlocksAndThreadsChangeNoBit) {
  const Graph g = RandomDirectedGraph(GetParam());
  const std::vector<float> x = RandomMatrix(kGraphNodes, 2);
  const std::vector<float> forward = PropagateInBlocks(g, x, kGraphNodes, 1);
  const std::vector<float> backward = TransposedInBlocks(g, x, kGraphNodes, 1);
  for (uint64_t rows : {uint64_t{1}, uint64_t{7}, uint64_t{64}, kGraphNodes}) {
    for (unsigned threads : {1u, 2u, 3u, 8u, 16u}) {
      EXPECT_EQ(PropagateInBlocks(g, x, rows, threads), forward) << rows << " rows, " << threads;
      EXPECT_EQ(TransposedInBlocks(g, x, rows, threads), backward) << rows << " rows, " << threads;
    }
  }
}

// Source weights applied to the input once (ScaleBySource) and then left out of the edges: each
// output is d_i (s_i x_i + Σ s_j x_j) over the rounded products, summed in edge order, bit for
// bit, at the widths whose sums the kernel keeps in a local row (8 to 64) and at one it does not
// (40); close to the weights applied per edge; and weights of 1 given per edge sum the same bits
// as none.
TEST_P(GcnPropagation, ScaledSourcesSumTheRoundedProducts) {
  const Graph g = RandomDirectedGraph(GetParam());
  const std::vector<float> ones(kGraphNodes, 1.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1, 1);
  for (size_t width : {8, 16, 32, 40, 48, 64}) {
    std::vector<float> scaled(kGraphNodes * width);
    for (float& x : scaled) x = value(rng);
    auto propagate = [&](const PropagationWeights& w, unsigned threads) {
      std::vector<float> out(kGraphNodes * width, NAN);
      ForBlocks(g, 64, [&](const AdjacencyBlock& b) {
        Propagate(
            b, w, MatrixSpan<const float>(scaled.data(), kGraphNodes, width),
            MatrixSpan<float>(out.data() + b.rows.begin * width, b.rows.end - b.rows.begin, width),
            threads);
      });
      return out;
    };
    const std::vector<float> per_edge = propagate(PropagationWeights::Gcn(g.norm), 1);
    ScaleBySource(g.norm, MatrixSpan<float>(scaled.data(), kGraphNodes, width), 3);
    const PropagationWeights weights = PropagationWeights::Gcn(g.norm).OfScaledSources();
    EXPECT_TRUE(weights.source.empty());
    EXPECT_TRUE(weights.self_loop);
    for (const PropagationWeights& w : {weights, PropagationWeights{g.norm, ones, true}}) {
      for (unsigned threads : {1u, 3u}) {
        const std::vector<float> out = propagate(w, threads);
        for (uint64_t i = 0; i < kGraphNodes; ++i) {
          for (size_t c = 0; c < width; ++c) {
            float sum = scaled[i * width + c];
            for (uint64_t j : g.in[i]) sum += scaled[j * width + c];
            ASSERT_EQ(out[i * width + c], sum * g.norm[i]) << "row " << i << " of " << width;
            ASSERT_NEAR(out[i * width + c], per_edge[i * width + c], 1e-5) << "row " << i;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(IdWidths, GcnPropagation, ::testing::Values(4u, 8u),
                         [](const auto& info) { return std::to_string(info.param) + "ByteIds"; });

}  // namespace
}  // namespace strata
