#include "fullgraph/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/random.h"
#include "nn/activations.h"
#include "nn/gemm.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "nn/sddmm.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr float kSlope = static_cast<float>(kLeakyReluSlope);

inline float LeakyOf(float x) { return x > 0 ? x : kSlope * x; }
inline float LeakySlopeAt(float x) { return x > 0 ? 1.0f : kSlope; }

// An edge's dropout scale: 1 / (1 - p) kept, 0 dropped (1 without dropout).
class EdgeDropout {
 public:
  EdgeDropout(const GraphAttention& a, uint64_t nodes)
      : seed_(a.seed),
        heads_(a.heads),
        self_key_(nodes),
        threshold_(static_cast<uint32_t>(std::lround(a.dropout * 65536.0))),
        kept_(static_cast<float>(1.0 / (1.0 - a.dropout))),
        on_(a.dropout > 0) {}

  // Of edge s -> d in head k; `self` marks d's self loop.
  float Scale(uint64_t d, uint64_t s, bool self, size_t k) const {
    if (!on_) return 1.0f;
    const uint64_t key = (self ? self_key_ : s) * heads_ + k;
    return (MixSeed(MixSeed(seed_, d), key) & 0xFFFF) >= threshold_ ? kept_ : 0.0f;
  }

 private:
  uint64_t seed_;
  uint64_t heads_;
  uint64_t self_key_;
  uint32_t threshold_;
  float kept_;
  bool on_;
};

// Row i's in-edges of a block, its self loop last: Source(i, e) for e < Edges(i).
class BlockEdges {
 public:
  // Prefetching rows of `cols` floats.
  BlockEdges(const AdjacencyBlock& b, size_t cols)
      : b_(b),
        first_(b.indptr[b.rows.begin]),
        last_(b.indptr[b.rows.end]),
        ahead_(PrefetchDistance(cols)) {}
  uint64_t Edges(uint64_t i) const { return b_.indptr[i + 1] - b_.indptr[i] + 1; }
  bool Self(uint64_t i, uint64_t e) const { return e + 1 == Edges(i); }
  uint64_t Source(uint64_t i, uint64_t e) const {
    return Self(i, e)
               ? i
               : LoadNodeId(b_.neighbours + (b_.indptr[i] + e - first_) * b_.id_bytes, b_.id_bytes);
  }
  uint64_t nodes() const { return b_.indptr.size() - 1; }
  // Prefetches, of `rows`, the row of the stored edge some edges after row i's e-th, across
  // rows: a node has too few edges to hide the misses of its own.
  void Prefetch(MatrixSpan<const float> rows, uint64_t i, uint64_t e) const {
    const uint64_t later = b_.indptr[i] + e + ahead_;
    if (later >= last_) return;
    PrefetchRow(rows.row(LoadNodeId(b_.neighbours + (later - first_) * b_.id_bytes, b_.id_bytes)),
                rows.cols());
  }

 private:
  const AdjacencyBlock& b_;
  uint64_t first_, last_;
  uint64_t ahead_;
};

void CheckBlock(const AdjacencyBlock& b, size_t gathered_rows, size_t block_rows) {
  if (gathered_rows != b.indptr.size() - 1 || block_rows != b.rows.end - b.rows.begin) {
    throw Error::Internal("graph attention: shapes do not match the block");
  }
}

// Runs fn(first row, end row) over ranges of the block's rows, the work estimated from its
// edges.
template <typename Fn>
void ForBlockRows(const AdjacencyBlock& b, size_t work_per_edge, unsigned threads, Fn&& fn) {
  const uint64_t rows = b.rows.end - b.rows.begin;
  const uint64_t edges = b.indptr[b.rows.end] - b.indptr[b.rows.begin];
  ForRows(threads, rows, (edges / std::max<uint64_t>(rows, 1) + 2) * work_per_edge,
          [&](uint64_t begin, uint64_t end) { fn(b.rows.begin + begin, b.rows.begin + end); });
}

// The softmax of one destination's edges, per head: `scores` holds e (after the LeakyReLU) per
// edge and head on entry and alpha on return; lse (when given) gets the log of each head's
// denominator, max + log Σ exp(e - max).
inline void Softmax(size_t edges, size_t heads, float* scores, float* lse) {
  for (size_t k = 0; k < heads; ++k) {
    float m = -std::numeric_limits<float>::infinity();
    for (size_t e = 0; e < edges; ++e) m = std::max(m, scores[e * heads + k]);
    float z = 0;
    for (size_t e = 0; e < edges; ++e) {
      float& s = scores[e * heads + k];
      s = std::exp(s - m);
      z += s;
    }
    const float inv = 1.0f / z;
    for (size_t e = 0; e < edges; ++e) scores[e * heads + k] *= inv;
    if (lse != nullptr) lse[k] = m + std::log(z);
  }
}

// A head's features are few (8 in the GAT paper's recipe): row operations of a run-time length
// that short never reach the vector loops of nn/row_ops.h. Where the length is a multiple of 8
// these run 8 lanes at a time (one AVX register); the dot product then sums in 8 lanes,
// combined pairwise, a fixed order.
constexpr size_t kLanes = 8;

inline void HeadAxpy(float* __restrict acc, float a, const float* __restrict x, size_t f) {
  if (f % kLanes != 0) return AxpyRow(acc, a, x, f);
  for (size_t i = 0; i < f; i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) acc[i + j] += a * x[i + j];
  }
}

inline float HeadDot(const float* x, const float* y, size_t f) {
  if (f % kLanes != 0) return DotRow(x, y, f);
  float lanes[kLanes] = {};
  for (size_t i = 0; i < f; i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) lanes[j] += x[i + j] * y[i + j];
  }
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// dL/dagg of one row: dL/dout itself where the heads are concatenated, a share of it in each
// head where they are averaged.
inline void HeadsGradient(const GraphAttention& a, const float* grad_out, float* grad_agg) {
  if (a.concat) {
    CopyRow(grad_agg, grad_out, a.width());
    return;
  }
  const float inv_heads = 1.0f / static_cast<float>(a.heads);
  for (size_t k = 0; k < a.heads; ++k) {
    ScaledCopyRow(grad_agg + k * a.per_head, inv_heads, grad_out, a.per_head);
  }
}

STRATA_NN_CLONES void AttendRows(const AdjacencyBlock& b, const GraphAttention& a,
                                 const BlockEdges& edges, const EdgeDropout& dropout,
                                 MatrixSpan<const float> transformed, MatrixSpan<float> out,
                                 uint64_t begin, uint64_t end) {
  const size_t heads = a.heads, f = a.per_head, w = a.width();
  std::vector<float> scores, er(heads), sum(a.concat ? 0 : w);
  for (uint64_t d = begin; d < end; ++d) {
    const float* td = transformed.row(d);
    for (size_t k = 0; k < heads; ++k) er[k] = HeadDot(a.attn_r.row(k), td + k * f, f);
    const uint64_t n = edges.Edges(d);
    scores.resize(n * heads);
    for (uint64_t e = 0; e < n; ++e) {
      edges.Prefetch(transformed, d, e);
      const float* ts = transformed.row(edges.Source(d, e));
      for (size_t k = 0; k < heads; ++k) scores[e * heads + k] = LeakyOf(ts[w + k] + er[k]);
    }
    Softmax(n, heads, scores.data(), nullptr);
    float* o = a.concat ? out.row(d - b.rows.begin) : sum.data();
    ZeroRow(o, w);
    for (uint64_t e = 0; e < n; ++e) {
      const uint64_t s = edges.Source(d, e);
      const float* ts = transformed.row(s);
      for (size_t k = 0; k < heads; ++k) {
        const float weight = scores[e * heads + k] * dropout.Scale(d, s, edges.Self(d, e), k);
        HeadAxpy(o + k * f, weight, ts + k * f, f);
      }
    }
    if (!a.concat) {
      float* mean = out.row(d - b.rows.begin);
      const float inv_heads = 1.0f / static_cast<float>(heads);
      for (size_t j = 0; j < f; ++j) {
        float total = 0;
        for (size_t k = 0; k < heads; ++k) total += sum[k * f + j];
        mean[j] = total * inv_heads;
      }
    }
  }
}

STRATA_NN_CLONES void StatisticsRows(const AdjacencyBlock& b, const GraphAttention& a,
                                     const BlockEdges& edges, const EdgeDropout& dropout,
                                     MatrixSpan<const float> transformed,
                                     MatrixSpan<const float> grad_out, MatrixSpan<float> statistics,
                                     uint64_t begin, uint64_t end) {
  const size_t heads = a.heads, f = a.per_head, w = a.width();
  std::vector<float> raw, alpha, grad_alpha, grad_agg(w);
  for (uint64_t d = begin; d < end; ++d) {
    const float* td = transformed.row(d);
    float* stats = statistics.row(d - b.rows.begin);
    float* er = stats;
    float* lse = stats + heads;
    float* c = stats + 2 * heads;
    float* grad_er = stats + 3 * heads;
    for (size_t k = 0; k < heads; ++k) er[k] = HeadDot(a.attn_r.row(k), td + k * f, f);
    HeadsGradient(a, grad_out.row(d - b.rows.begin), grad_agg.data());
    const uint64_t n = edges.Edges(d);
    raw.resize(n * heads);
    alpha.resize(n * heads);
    grad_alpha.resize(n * heads);
    for (uint64_t e = 0; e < n; ++e) {
      edges.Prefetch(transformed, d, e);
      const uint64_t s = edges.Source(d, e);
      const float* ts = transformed.row(s);
      for (size_t k = 0; k < heads; ++k) {
        raw[e * heads + k] = ts[w + k] + er[k];
        alpha[e * heads + k] = LeakyOf(raw[e * heads + k]);
        grad_alpha[e * heads + k] = dropout.Scale(d, s, edges.Self(d, e), k) *
                                    HeadDot(grad_agg.data() + k * f, ts + k * f, f);
      }
    }
    Softmax(n, heads, alpha.data(), lse);
    for (size_t k = 0; k < heads; ++k) {
      float total = 0;
      for (uint64_t e = 0; e < n; ++e) total += alpha[e * heads + k] * grad_alpha[e * heads + k];
      c[k] = total;
      float grad = 0;
      for (uint64_t e = 0; e < n; ++e) {
        const size_t i = e * heads + k;
        grad += alpha[i] * (grad_alpha[i] - total) * LeakySlopeAt(raw[i]);
      }
      grad_er[k] = grad;
    }
  }
}

STRATA_NN_CLONES void SourceGradientRows(const AdjacencyBlock& b, const GraphAttention& a,
                                         const BlockEdges& edges, const EdgeDropout& dropout,
                                         MatrixSpan<const float> gradient,
                                         MatrixSpan<const float> transformed,
                                         MatrixSpan<float> source, uint64_t begin, uint64_t end) {
  const size_t heads = a.heads, f = a.per_head, w = a.width();
  for (uint64_t s = begin; s < end; ++s) {
    const float* ts = transformed.row(s - b.rows.begin);
    float* grad_wh = source.row(s - b.rows.begin);
    float* grad_el = grad_wh + w;
    float* grad_er = grad_el + heads;
    ZeroRow(grad_wh, w + heads);
    // Row s lists the d with d -> s; on an undirected graph each is also an edge s -> d.
    const uint64_t n = edges.Edges(s);
    for (uint64_t e = 0; e < n; ++e) {
      edges.Prefetch(gradient, s, e);
      const uint64_t d = edges.Source(s, e);
      const float* gd = gradient.row(d);
      const float* er = gd + w;
      const float* lse = er + heads;
      const float* c = lse + heads;
      for (size_t k = 0; k < heads; ++k) {
        const float raw = ts[w + k] + er[k];
        const float alpha = std::exp(LeakyOf(raw) - lse[k]);
        const float scale = dropout.Scale(d, s, edges.Self(s, e), k);
        HeadAxpy(grad_wh + k * f, alpha * scale, gd + k * f, f);
        const float grad_alpha = scale * HeadDot(gd + k * f, ts + k * f, f);
        grad_el[k] += alpha * (grad_alpha - c[k]) * LeakySlopeAt(raw);
      }
    }
    const float* own_grad_er = gradient.row(s) + w + 3 * heads;
    for (size_t k = 0; k < heads; ++k) {
      grad_er[k] = own_grad_er[k];
      HeadAxpy(grad_wh + k * f, grad_el[k], a.attn_l.row(k), f);
      HeadAxpy(grad_wh + k * f, grad_er[k], a.attn_r.row(k), f);
    }
  }
}

}  // namespace

void SourceScores(const GraphAttention& a, MatrixSpan<float> transformed, unsigned threads) {
  const size_t rows = transformed.rows();
  HeadDots<float>(transformed.Sub(0, 0, rows, a.width()), a.attn_l,
                  transformed.Sub(0, a.width(), rows, a.heads), threads);
}

void AttendBlock(const AdjacencyBlock& b, const GraphAttention& a,
                 MatrixSpan<const float> transformed, MatrixSpan<float> out, unsigned threads) {
  CheckBlock(b, transformed.rows(), out.rows());
  const BlockEdges edges(b, transformed.cols());
  const EdgeDropout dropout(a, edges.nodes());
  ForBlockRows(b, 2 * a.transformed_width(), threads, [&](uint64_t begin, uint64_t end) {
    AttendRows(b, a, edges, dropout, transformed, out, begin, end);
  });
}

void AttentionStatistics(const AdjacencyBlock& b, const GraphAttention& a,
                         MatrixSpan<const float> transformed, MatrixSpan<const float> grad_out,
                         MatrixSpan<float> statistics, unsigned threads) {
  CheckBlock(b, transformed.rows(), grad_out.rows());
  CheckBlock(b, transformed.rows(), statistics.rows());
  const BlockEdges edges(b, transformed.cols());
  const EdgeDropout dropout(a, edges.nodes());
  ForBlockRows(b, 2 * a.transformed_width(), threads, [&](uint64_t begin, uint64_t end) {
    StatisticsRows(b, a, edges, dropout, transformed, grad_out, statistics, begin, end);
  });
}

void GradientRows(const GraphAttention& a, MatrixSpan<const float> grad_out,
                  MatrixSpan<const float> statistics, MatrixSpan<float> gradient) {
  for (size_t r = 0; r < gradient.rows(); ++r) {
    HeadsGradient(a, grad_out.row(r), gradient.row(r));
    CopyRow(gradient.row(r) + a.width(), statistics.row(r), a.statistics_width());
  }
}

void AttentionSourceGradients(const AdjacencyBlock& b, const GraphAttention& a,
                              MatrixSpan<const float> gradient, MatrixSpan<const float> transformed,
                              MatrixSpan<float> source, unsigned threads) {
  CheckBlock(b, gradient.rows(), transformed.rows());
  CheckBlock(b, gradient.rows(), source.rows());
  const BlockEdges edges(b, gradient.cols());
  const EdgeDropout dropout(a, edges.nodes());
  ForBlockRows(b, 2 * a.transformed_width(), threads, [&](uint64_t begin, uint64_t end) {
    SourceGradientRows(b, a, edges, dropout, gradient, transformed, source, begin, end);
  });
}

void AttentionVectorGradients(const GraphAttention& a, MatrixSpan<const float> transformed,
                              MatrixSpan<const float> source, MatrixSpan<float> attn_l_grad,
                              MatrixSpan<float> attn_r_grad, bool accumulate) {
  const size_t rows = transformed.rows(), f = a.per_head, w = a.width();
  const float beta = accumulate ? 1 : 0;
  for (size_t k = 0; k < a.heads; ++k) {
    const MatrixSpan<const float> wh = transformed.Sub(0, k * f, rows, f);
    const MatrixSpan<const float> grad_el(source.data() + w + k, rows, 1, source.stride());
    Gemm<float>(Trans::kYes, Trans::kNo, 1, grad_el, wh, beta, attn_l_grad.Sub(k, 0, 1, f));
    const MatrixSpan<const float> grad_er(source.data() + w + a.heads + k, rows, 1,
                                          source.stride());
    Gemm<float>(Trans::kYes, Trans::kNo, 1, grad_er, wh, beta, attn_r_grad.Sub(k, 0, 1, f));
  }
}

}  // namespace strata
