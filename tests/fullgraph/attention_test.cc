// The full graph's attention kernels, composed as the runner composes them, against the
// mini-batch GATConv over the whole graph (every node a destination): the same output and the
// same gradients of the weight, the attention vectors and the input, for concatenated and
// averaged heads (of 4 and of 8 features) and any block size and thread count, on graphs with
// an isolated node, a repeated edge and a stored self loop: undirected, through the two
// gathers and through the scatter, and directed, through the scatter; and with attention
// dropout, gradients against finite differences (the backward passes draw the forward's masks;
// steps of 3e-3, as at 1e-2 an edge score crossed the LeakyReLU's kink).
#include "fullgraph/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/random.h"
#include "nn/gat_conv.h"
#include "nn/gemm.h"

namespace strata {
namespace {

// Row v lists v's in-neighbours.
struct Graph {
  uint64_t nodes = 0;
  std::vector<uint64_t> indptr;
  std::vector<uint32_t> indptr32;  // the mini-batch layer's
  std::vector<uint32_t> ids;
};

// Undirected: every edge's reverse stored; directed: none (node 0 has no in-edges).
Graph RandomGraph(uint64_t nodes, uint64_t seed, bool directed) {
  std::vector<std::vector<uint32_t>> in(nodes);
  auto connect = [&](uint32_t u, uint32_t v) {
    if (directed && v == 0) return;
    in[v].push_back(u);
    if (u != v && !directed) in[u].push_back(v);
  };
  Rng rng(seed);
  for (uint32_t v = 0; v + 1 < nodes; ++v) {  // the last node stays isolated
    for (int k = 0; k < 2; ++k) {
      const auto u = static_cast<uint32_t>(rng.Next() % (nodes - 1));
      if (u != v) connect(u, v);
    }
  }
  connect(1, 2);  // a repeated edge
  connect(1, 2);
  connect(3, 3);  // a stored self loop
  Graph g;
  g.nodes = nodes;
  g.indptr.push_back(0);
  for (const auto& row : in) {
    g.ids.insert(g.ids.end(), row.begin(), row.end());
    g.indptr.push_back(g.ids.size());
  }
  g.indptr32.assign(g.indptr.begin(), g.indptr.end());
  return g;
}

Matrix RandomRows(size_t rows, size_t cols, uint64_t seed) {
  Matrix m(rows, cols);
  Rng rng(seed);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) m(i, j) = static_cast<float>(rng.Uniform() * 2 - 1);
  }
  return m;
}

struct AttentionResult {
  Matrix out, weight_grad, attn_l_grad, attn_r_grad, grad_in;
};

// The attention's output and source rows from its transformed rows, with the full graph's
// kernels on `threads` threads, the adjacency in blocks of block_rows rows, for the loss
// Σ out ⊙ grad_out; the backward pass scatters (as on a directed graph) or gathers twice.
struct AttentionRows {
  Matrix out, source;
};

AttentionRows AttendAndBack(const Graph& g, const GraphAttention& a,
                            MatrixSpan<const float> transformed, MatrixSpan<const float> grad_out,
                            uint64_t block_rows, bool scatter, unsigned threads) {
  const uint64_t n = g.nodes;
  auto for_blocks = [&](auto&& fn) {
    for (uint64_t begin = 0; begin < n; begin += block_rows) {
      const uint64_t end = std::min(n, begin + block_rows);
      const std::vector<uint64_t> offsets(g.indptr.begin() + begin, g.indptr.begin() + end + 1);
      fn(AdjacencyBlock{{begin, end},
                        {offsets, begin},
                        reinterpret_cast<const std::byte*>(g.ids.data() + g.indptr[begin]),
                        4,
                        n},
         begin, end - begin);
    }
  };
  AttentionRows r{Matrix(n, a.out_dim()), Matrix(n, a.source_width())};
  Matrix statistics(n, a.statistics_width()), gradient(n, a.gradient_width()),
      scattered(n, a.transformed_width());
  for_blocks([&](const AdjacencyBlock& block, uint64_t first, uint64_t rows) {
    AttendBlock(block, a, transformed, r.out.span().RowRange(first, rows), threads);
    if (scatter) {
      AttentionScatter(block, a, transformed, grad_out.RowRange(first, rows),
                       statistics.span().RowRange(first, rows), scattered.span(), threads);
    } else {
      AttentionStatistics(block, a, transformed, grad_out.RowRange(first, rows),
                          statistics.span().RowRange(first, rows), threads);
    }
  });
  if (scatter) {
    ScatteredSourceRows(a, scattered.span(), statistics.span(), r.source.span());
  } else {
    GradientRows(a, grad_out, statistics.span(), gradient.span());
    for_blocks([&](const AdjacencyBlock& block, uint64_t first, uint64_t rows) {
      AttentionSourceGradients(block, a, gradient.span(), transformed.RowRange(first, rows),
                               r.source.span().RowRange(first, rows), threads);
    });
  }
  return r;
}

Matrix TransformedRows(const GraphAttention& a, MatrixSpan<const float> weight,
                       MatrixSpan<const float> x, unsigned threads) {
  Matrix transformed(x.rows(), a.transformed_width());
  Gemm<float>(Trans::kNo, Trans::kNo, 1, x, weight, 0,
              transformed.span().Sub(0, 0, x.rows(), a.width()));
  SourceScores(a, transformed.span(), threads);
  return transformed;
}

// One GAT layer's forward and backward (AttendAndBack) and its parameters' and input's
// gradients.
AttentionResult FullGraphLayer(const Graph& g, const GraphAttention& a,
                               MatrixSpan<const float> weight, MatrixSpan<const float> x,
                               MatrixSpan<const float> grad_out, uint64_t block_rows, bool scatter,
                               unsigned threads = 2) {
  const uint64_t n = g.nodes;
  const size_t w = a.width();
  const Matrix transformed = TransformedRows(a, weight, x, threads);
  AttentionRows rows =
      AttendAndBack(g, a, transformed.span(), grad_out, block_rows, scatter, threads);
  AttentionResult r{std::move(rows.out), Matrix(weight.rows(), w), Matrix(a.heads, a.per_head),
                    Matrix(a.heads, a.per_head), Matrix(n, x.cols())};
  const Matrix& source = rows.source;
  const MatrixSpan<const float> grad_wh = source.span().Sub(0, 0, n, w);
  Gemm<float>(Trans::kYes, Trans::kNo, 1, x, grad_wh, 0, r.weight_grad.span());
  Gemm<float>(Trans::kNo, Trans::kYes, 1, grad_wh, weight, 0, r.grad_in.span());
  // In two row ranges, as the runner sums per chunk.
  const uint64_t half = n / 2;
  AttentionVectorGradients(a, transformed.span().RowRange(0, half), source.span().RowRange(0, half),
                           r.attn_l_grad.span(), r.attn_r_grad.span(), false);
  AttentionVectorGradients(a, transformed.span().RowRange(half, n - half),
                           source.span().RowRange(half, n - half), r.attn_l_grad.span(),
                           r.attn_r_grad.span(), true);
  return r;
}

void ExpectNear(MatrixSpan<const float> actual, MatrixSpan<const float> expected,
                const char* what) {
  ASSERT_EQ(actual.rows(), expected.rows()) << what;
  ASSERT_EQ(actual.cols(), expected.cols()) << what;
  for (size_t i = 0; i < actual.rows(); ++i) {
    for (size_t j = 0; j < actual.cols(); ++j) {
      EXPECT_NEAR(actual(i, j), expected(i, j), 1e-5 + 1e-4 * std::abs(expected(i, j)))
          << what << " (" << i << ", " << j << ")";
    }
  }
}

// A layer's heads: how many, of how many features, concatenated or averaged.
struct HeadShape {
  size_t heads, f;
  bool concat;
};

// The parameter: the graph is directed.
class GraphAttentionTest : public ::testing::TestWithParam<bool> {};

TEST_P(GraphAttentionTest, MatchesTheMiniBatchLayerOverTheWholeGraph) {
  const Graph g = RandomGraph(40, 1, GetParam());
  const size_t in = 6;
  const Matrix x = RandomRows(g.nodes, in, 2);
  // Heads of 8 features run the 8-lane row operations.
  for (const HeadShape shape : {HeadShape{3, 4, true}, HeadShape{2, 4, false},
                                HeadShape{2, 8, true}, HeadShape{1, 5, false}}) {
    const size_t heads = shape.heads, f = shape.f;
    const bool concat = shape.concat;
    SCOPED_TRACE(::testing::Message()
                 << heads << " heads of " << f << (concat ? ", concatenated" : ", averaged"));
    GatConv conv(in, f, {.heads = heads, .concat_heads = concat}, 5, /*bias=*/false);
    const Matrix grad_out = RandomRows(g.nodes, conv.out_dim(), 3);
    Matrix out, grad_in;
    LayerInput<float> input;
    input.graph = BlockCsr{
        static_cast<uint32_t>(g.nodes), static_cast<uint32_t>(g.nodes), g.indptr32, g.ids, {}};
    input.features = x.span();
    conv.Forward(input, out);
    conv.Backward(grad_out.span(), &grad_in);
    std::vector<Parameter> params = conv.Parameters("");
    ASSERT_EQ(params.size(), 3u);  // weight, attn_l, attn_r
    const GraphAttention a{heads, f, concat, params[1].value, params[2].value};
    // The gathers need every edge's reverse; the scatter runs on any graph.
    for (const bool scatter :
         GetParam() ? std::vector<bool>{true} : std::vector<bool>{false, true}) {
      for (uint64_t block_rows : {uint64_t{1}, uint64_t{7}, g.nodes}) {
        SCOPED_TRACE(::testing::Message()
                     << (scatter ? "scatter" : "gathers") << ", blocks of " << block_rows);
        const AttentionResult r =
            FullGraphLayer(g, a, params[0].value, x.span(), grad_out.span(), block_rows, scatter);
        ExpectNear(r.out.span(), out.span(), "output");
        ExpectNear(r.weight_grad.span(), params[0].grad, "weight gradient");
        ExpectNear(r.attn_l_grad.span(), params[1].grad, "attn_l gradient");
        ExpectNear(r.attn_r_grad.span(), params[2].grad, "attn_r gradient");
        ExpectNear(r.grad_in.span(), grad_in.span(), "input gradient");
      }
    }
  }
}

// A layer run in groups of heads, each group gathering only its own columns, computes the
// whole layer's output and source rows bit for bit, dropout masks included: with the two
// gathers and with the scatter.
TEST_P(GraphAttentionTest, GroupsOfHeadsComputeTheWholeLayer) {
  const Graph g = RandomGraph(60, 2, GetParam());
  const size_t in = 5, heads = 3, f = 4, w = heads * f;
  const Matrix x = RandomRows(g.nodes, in, 3);
  const Matrix weight = RandomRows(in, w, 4);
  const Matrix attn_l = RandomRows(heads, f, 5), attn_r = RandomRows(heads, f, 6);
  const Matrix grad_out = RandomRows(g.nodes, w, 7);
  const GraphAttention a{heads, f, true, attn_l.span(), attn_r.span(), 0.4, 8};
  const Matrix transformed = TransformedRows(a, weight.span(), x.span(), 2);
  for (const bool scatter : GetParam() ? std::vector<bool>{true} : std::vector<bool>{false, true}) {
    SCOPED_TRACE(scatter ? "scatter" : "gathers");
    const AttentionRows whole =
        AttendAndBack(g, a, transformed.span(), grad_out.span(), 7, scatter, 2);
    struct Group {
      size_t first, count;
    };
    for (const Group group : {Group{0, 2}, Group{2, 1}, Group{1, 1}}) {
      SCOPED_TRACE(::testing::Message() << "heads " << group.first << " + " << group.count);
      const GraphAttention part = a.Heads(group.first, group.count);
      const size_t cols = group.count * f;
      // The group's rows, [its W h | its el], and the gradient of its output columns.
      Matrix own(g.nodes, part.transformed_width());
      GroupRows(a, group.first, group.count, transformed.span(), own.span());
      for (size_t i = 0; i < g.nodes; ++i) {
        for (size_t j = 0; j < cols; ++j) ASSERT_EQ(own(i, j), transformed(i, group.first * f + j));
        for (size_t k = 0; k < group.count; ++k) {
          ASSERT_EQ(own(i, cols + k), transformed(i, w + group.first + k));
        }
      }
      const AttentionRows rows =
          AttendAndBack(g, part, own.span(), grad_out.span().Sub(0, group.first * f, g.nodes, cols),
                        7, scatter, 2);
      for (size_t i = 0; i < g.nodes; ++i) {
        for (size_t j = 0; j < cols; ++j) {
          ASSERT_EQ(rows.out(i, j), whole.out(i, group.first * f + j)) << i << ", " << j;
          ASSERT_EQ(rows.source(i, j), whole.source(i, group.first * f + j)) << i << ", " << j;
        }
        for (size_t k = 0; k < group.count; ++k) {
          ASSERT_EQ(rows.source(i, cols + k), whole.source(i, w + group.first + k));
          ASSERT_EQ(rows.source(i, cols + group.count + k),
                    whole.source(i, w + heads + group.first + k));
        }
      }
    }
  }
}

// The scatter's threads split columns, never the sums: any thread count gives the same bits.
TEST(GraphAttention, TheScatterIsTheSameOnAnyThreads) {
  const Graph g = RandomGraph(2000, 3, /*directed=*/true);
  const size_t in = 5;
  const Matrix x = RandomRows(g.nodes, in, 4);
  // One head of 40 features splits into two lanes of 20 (a 16-wide block and a tail each).
  for (const HeadShape shape : {HeadShape{1, 8, false}, HeadShape{3, 8, false},
                                HeadShape{1, 40, true}, HeadShape{3, 40, true}}) {
    const size_t heads = shape.heads, f = shape.f;
    SCOPED_TRACE(::testing::Message() << heads << " heads of " << f);
    const Matrix weight = RandomRows(in, heads * f, 5);
    const Matrix attn_l = RandomRows(heads, f, 6), attn_r = RandomRows(heads, f, 7);
    const Matrix grad_out = RandomRows(g.nodes, shape.concat ? heads * f : f, 8);
    const GraphAttention a{heads, f, shape.concat, attn_l.span(), attn_r.span(), 0.3, 9};
    const AttentionResult one =
        FullGraphLayer(g, a, weight.span(), x.span(), grad_out.span(), g.nodes, true, 1);
    for (const unsigned threads : {2u, 3u, 8u}) {
      SCOPED_TRACE(threads);
      const AttentionResult many =
          FullGraphLayer(g, a, weight.span(), x.span(), grad_out.span(), g.nodes, true, threads);
      for (auto [m, expected] : {std::pair{&many.weight_grad, &one.weight_grad},
                                 {&many.attn_l_grad, &one.attn_l_grad},
                                 {&many.attn_r_grad, &one.attn_r_grad},
                                 {&many.grad_in, &one.grad_in}}) {
        EXPECT_TRUE(std::equal(m->data(), m->data() + m->rows() * m->cols(), expected->data()));
      }
    }
  }
}

// Σ out ⊙ grad_out with attention dropout: its gradients against central differences, which
// hold only if the backward passes keep the edges the forward kept.
TEST_P(GraphAttentionTest, DropoutGradientsMatchFiniteDifferences) {
  const bool directed = GetParam();
  const Graph g = RandomGraph(30, 4, directed);
  const size_t in = 5, f = 3, heads = 2;
  Matrix x = RandomRows(g.nodes, in, 5);
  Matrix weight = RandomRows(in, heads * f, 6);
  Matrix attn_l = RandomRows(heads, f, 7), attn_r = RandomRows(heads, f, 8);
  const Matrix grad_out = RandomRows(g.nodes, heads * f, 9);
  GraphAttention a{heads, f, true, attn_l.span(), attn_r.span(), 0.4, 11};
  auto loss = [&] {
    const AttentionResult r =
        FullGraphLayer(g, a, weight.span(), x.span(), grad_out.span(), 8, directed);
    double total = 0;
    for (size_t i = 0; i < g.nodes; ++i) {
      for (size_t j = 0; j < heads * f; ++j) total += double(r.out(i, j)) * grad_out(i, j);
    }
    return total;
  };
  const AttentionResult r =
      FullGraphLayer(g, a, weight.span(), x.span(), grad_out.span(), 8, directed);
  auto check = [&](Matrix& m, MatrixSpan<const float> analytic, const char* what) {
    for (size_t k = 0; k < 4; ++k) {
      const size_t i = (k * 3) % m.rows(), j = (k * 5) % m.cols();
      const float saved = m(i, j), h = 3e-3f;
      m(i, j) = saved + h;
      const double up = loss();
      m(i, j) = saved - h;
      const double down = loss();
      m(i, j) = saved;
      EXPECT_NEAR((up - down) / (2 * h), analytic(i, j), 2e-3 + 0.02 * std::abs(analytic(i, j)))
          << what << " (" << i << ", " << j << ")";
    }
  };
  check(weight, r.weight_grad.span(), "weight");
  check(attn_l, r.attn_l_grad.span(), "attn_l");
  check(attn_r, r.attn_r_grad.span(), "attn_r");
  check(x, r.grad_in.span(), "input");
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphAttentionTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Directed" : "Undirected"; });

}  // namespace
}  // namespace strata
