#include "fullgraph/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
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
        heads_(a.LayerHeads()),
        first_head_(a.first_head),
        self_key_(nodes),
        threshold_(static_cast<uint32_t>(std::lround(a.dropout * 65536.0))),
        kept_(static_cast<float>(1.0 / (1.0 - a.dropout))),
        on_(a.dropout > 0) {}

  // Of edge s -> d in head k; `self` marks d's self loop.
  float Scale(uint64_t d, uint64_t s, bool self, size_t k) const {
    if (!on_) return 1.0f;
    const uint64_t key = (self ? self_key_ : s) * heads_ + first_head_ + k;
    return (MixSeed(MixSeed(seed_, d), key) & 0xFFFF) >= threshold_ ? kept_ : 0.0f;
  }

 private:
  uint64_t seed_;
  uint64_t heads_;
  uint64_t first_head_;
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
    return Self(i, e) ? i : StoredSource(b_.indptr[i] + e);
  }
  uint64_t nodes() const { return b_.nodes; }
  // Prefetches, of `rows`, the row of the stored edge some edges after row i's e-th, across
  // rows: a node has too few edges to hide the misses of its own.
  void Prefetch(MatrixSpan<const float> rows, uint64_t i, uint64_t e) const {
    const uint64_t later = b_.indptr[i] + e + ahead_;
    if (later < last_) PrefetchRow(rows.row(StoredSource(later)), rows.cols());
  }

 private:
  // The source of the block's stored edge with global id `edge`.
  uint64_t StoredSource(uint64_t edge) const {
    return LoadNodeId(b_.neighbours + (edge - first_) * b_.id_bytes, b_.id_bytes);
  }

  const AdjacencyBlock& b_;
  uint64_t first_, last_;
  uint64_t ahead_;
};

// Throws unless `gathered` has a row per node and `rows` one per block row, each as wide as
// its layout says.
void CheckShapes(const AdjacencyBlock& b, MatrixSpan<const float> gathered, size_t gathered_width,
                 MatrixSpan<const float> rows, size_t rows_width) {
  if (gathered.rows() != b.nodes || gathered.cols() != gathered_width ||
      rows.rows() != b.rows.end - b.rows.begin || rows.cols() != rows_width ||
      !b.indptr.Covers(b.rows.begin, b.rows.end)) {
    throw Error::Internal("graph attention: shapes do not match the block");
  }
}

// Runs fn(edges, dropout, first row, end row) over ranges of the block's rows of about equal
// edges (ForBlockRanges); `gathered` is the matrix the pass gathers (and prefetches) from.
template <typename Fn>
void ForBlockRows(const AdjacencyBlock& b, const GraphAttention& a,
                  MatrixSpan<const float> gathered, unsigned threads, Fn&& fn) {
  const BlockEdges edges(b, gathered.cols());
  const EdgeDropout dropout(a, edges.nodes());
  ForBlockRanges(b, threads, 2 * gathered.cols(),
                 [&](uint64_t begin, uint64_t end) { fn(edges, dropout, begin, end); });
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

// A source row's score terms: dL/dWh[k] += dL/del[k] a_l[k] + dL/der[k] a_r[k], the row laid
// out as [dL/dWh | dL/del | dL/der].
inline void AddScoreTerms(const GraphAttention& a, float* source) {
  const size_t f = a.per_head;
  const float* grad_el = source + a.width();
  const float* grad_er = grad_el + a.heads;
  for (size_t k = 0; k < a.heads; ++k) {
    HeadAxpy(source + k * f, grad_el[k], a.attn_l.row(k), f);
    HeadAxpy(source + k * f, grad_er[k], a.attn_r.row(k), f);
  }
}

// Each destination's largest score per head: max[k] over its edges of e(s -> d, k), the
// neighbour rows prefetched. The softmax's terms exp(e - max) are then at most 1.
inline void LargestScores(const BlockEdges& edges, MatrixSpan<const float> transformed,
                          size_t width, const float* er, uint64_t d, std::span<float> largest) {
  std::fill(largest.begin(), largest.end(), -std::numeric_limits<float>::infinity());
  for (uint64_t e = 0; e < edges.Edges(d); ++e) {
    edges.Prefetch(transformed, d, e);
    const float* ts = transformed.row(edges.Source(d, e));
    for (size_t k = 0; k < largest.size(); ++k) {
      largest[k] = std::max(largest[k], LeakyOf(ts[width + k] + er[k]));
    }
  }
}

// Two passes over a destination's edges, keeping nothing per edge (a hub's edges would not
// fit): the largest scores, then the softmax's unnormalised terms p = exp(e - max) summed
// with what they weigh, divided by Σ p at the end.
STRATA_NN_CLONES void AttendRows(const AdjacencyBlock& b, const GraphAttention& a,
                                 const BlockEdges& edges, const EdgeDropout& dropout,
                                 MatrixSpan<const float> transformed, MatrixSpan<float> out,
                                 uint64_t begin, uint64_t end) {
  const size_t heads = a.heads, f = a.per_head, w = a.width();
  std::vector<float> er(heads), largest(heads), total(heads), sum(a.concat ? 0 : w);
  for (uint64_t d = begin; d < end; ++d) {
    const float* td = transformed.row(d);
    for (size_t k = 0; k < heads; ++k) er[k] = HeadDot(a.attn_r.row(k), td + k * f, f);
    LargestScores(edges, transformed, w, er.data(), d, largest);
    float* o = a.concat ? out.row(d - b.rows.begin) : sum.data();
    ZeroRow(o, w);
    std::fill(total.begin(), total.end(), 0.0f);
    for (uint64_t e = 0; e < edges.Edges(d); ++e) {
      const uint64_t s = edges.Source(d, e);
      const float* ts = transformed.row(s);
      for (size_t k = 0; k < heads; ++k) {
        const float p = std::exp(LeakyOf(ts[w + k] + er[k]) - largest[k]);
        total[k] += p;
        HeadAxpy(o + k * f, p * dropout.Scale(d, s, edges.Self(d, e), k), ts + k * f, f);
      }
    }
    for (size_t k = 0; k < heads; ++k) ScaleRow(o + k * f, 1.0f / total[k], f);
    if (!a.concat) {
      float* mean = out.row(d - b.rows.begin);
      const float inv_heads = 1.0f / static_cast<float>(heads);
      for (size_t j = 0; j < f; ++j) {
        float heads_sum = 0;
        for (size_t k = 0; k < heads; ++k) heads_sum += sum[k * f + j];
        mean[j] = heads_sum * inv_heads;
      }
    }
  }
}

// A head's backward statistics of a destination, summed over its in-edges in edge order. With
// alpha = p / Σ p, dalpha the gradient of an edge's (dropped-out) weight and s' the
// LeakyReLU's slope at its score: c = Σ alpha dalpha and
// dL/der = Σ alpha (dalpha - c) s' = (Σ p dalpha s' - c Σ p s') / Σ p.
struct SoftmaxSums {
  float p = 0, p_dalpha = 0, p_dalpha_slope = 0, p_slope = 0;

  // An in-edge of score `raw` (before the LeakyReLU), the head's largest score `largest`.
  void Add(float raw, float largest, float grad_alpha) {
    const float e = std::exp(LeakyOf(raw) - largest);
    const float slope = LeakySlopeAt(raw);
    p += e;
    p_dalpha += e * grad_alpha;
    p_dalpha_slope += e * grad_alpha * slope;
    p_slope += e * slope;
  }
  float Lse(float largest) const { return largest + std::log(p); }
  float C() const { return p_dalpha / p; }
  float GradEr() const { return (p_dalpha_slope - C() * p_slope) / p; }
};

// As AttendRows, two passes and nothing kept per edge: each head's SoftmaxSums.
STRATA_NN_CLONES void StatisticsRows(const AdjacencyBlock& b, const GraphAttention& a,
                                     const BlockEdges& edges, const EdgeDropout& dropout,
                                     MatrixSpan<const float> transformed,
                                     MatrixSpan<const float> grad_out, MatrixSpan<float> statistics,
                                     uint64_t begin, uint64_t end) {
  const size_t heads = a.heads, f = a.per_head, w = a.width();
  std::vector<float> largest(heads), grad_agg(w);
  std::vector<SoftmaxSums> sums(heads);
  for (uint64_t d = begin; d < end; ++d) {
    const float* td = transformed.row(d);
    float* stats = statistics.row(d - b.rows.begin);
    float* er = stats;
    float* lse = stats + heads;
    float* c = stats + 2 * heads;
    float* grad_er = stats + 3 * heads;
    for (size_t k = 0; k < heads; ++k) er[k] = HeadDot(a.attn_r.row(k), td + k * f, f);
    HeadsGradient(a, grad_out.row(d - b.rows.begin), grad_agg.data());
    LargestScores(edges, transformed, w, er, d, largest);
    std::fill(sums.begin(), sums.end(), SoftmaxSums{});
    for (uint64_t e = 0; e < edges.Edges(d); ++e) {
      const uint64_t s = edges.Source(d, e);
      const float* ts = transformed.row(s);
      for (size_t k = 0; k < heads; ++k) {
        sums[k].Add(ts[w + k] + er[k], largest[k],
                    dropout.Scale(d, s, edges.Self(d, e), k) *
                        HeadDot(grad_agg.data() + k * f, ts + k * f, f));
      }
    }
    for (size_t k = 0; k < heads; ++k) {
      lse[k] = sums[k].Lse(largest[k]);
      c[k] = sums[k].C();
      grad_er[k] = sums[k].GradEr();
    }
  }
}

// Each source s's gradients from its edges s -> d, the reverses of its in-edges: the weighted
// sum's transpose (alpha(s -> d) recomputed from el_s, er_d and lse_d) and the scores'.
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
    CopyRow(grad_er, gradient.row(s) + w + 3 * heads, heads);
    AddScoreTerms(a, grad_wh);
  }
}

// A share of the scatter's work: head k's feature columns [first, end). The lane whose columns
// start the head also writes its statistics and scatters its dL/del.
struct ScatterLane {
  size_t head = 0, first = 0, end = 0;
};

// Lanes enough for `threads`, each column in exactly one: whole heads, or a head split by its
// features when there are fewer heads than threads, into parts of 16 columns at least (a part
// narrower than a cache line would share every source row's line with its neighbour's).
std::vector<ScatterLane> ScatterLanes(const GraphAttention& a, unsigned threads) {
  const size_t parts = std::clamp<size_t>((threads + a.heads - 1) / a.heads, 1,
                                          std::max<size_t>(1, a.per_head / 16));
  std::vector<ScatterLane> lanes;
  for (size_t k = 0; k < a.heads; ++k) {
    for (size_t p = 0; p < parts; ++p) {
      lanes.push_back({k, p * a.per_head / parts, (p + 1) * a.per_head / parts});
    }
  }
  return lanes;
}

// One lane over the block's destinations, nothing kept per edge: StatisticsRows' two passes
// for head k (the same sums in the same order, so the same statistics), then a third that
// recomputes each in-edge's alpha from lse and adds its terms to the source's row. The sums are
// StatisticsRows' one head at a time, repeated by each lane of a head split into lanes: taking
// them from AttentionStatistics first instead (all heads at once, threads splitting rows) made
// the epoch slower, 6.7-7.0 s against 5.6 s in memory on the 1M-node directed graph (runs
// alternated).
STRATA_NN_CLONES void ScatterRows(const AdjacencyBlock& b, const GraphAttention& a,
                                  const BlockEdges& edges, const EdgeDropout& dropout,
                                  MatrixSpan<const float> transformed,
                                  MatrixSpan<const float> grad_out, MatrixSpan<float> statistics,
                                  MatrixSpan<float> scattered, const ScatterLane& lane) {
  const size_t heads = a.heads, f = a.per_head, w = a.width(), k = lane.head;
  const bool owner = lane.first == 0;
  const float share = a.concat ? 1.0f : 1.0f / static_cast<float>(heads);
  std::vector<float> grad_agg(f);
  for (uint64_t d = b.rows.begin; d < b.rows.end; ++d) {
    const float er = HeadDot(a.attn_r.row(k), transformed.row(d) + k * f, f);
    ScaledCopyRow(grad_agg.data(), share, grad_out.row(d - b.rows.begin) + (a.concat ? k * f : 0),
                  f);
    float largest = -std::numeric_limits<float>::infinity();
    for (uint64_t e = 0; e < edges.Edges(d); ++e) {
      edges.Prefetch(transformed, d, e);
      largest = std::max(largest, LeakyOf(transformed.row(edges.Source(d, e))[w + k] + er));
    }
    SoftmaxSums sums;
    for (uint64_t e = 0; e < edges.Edges(d); ++e) {
      const uint64_t s = edges.Source(d, e);
      const float* ts = transformed.row(s);
      sums.Add(ts[w + k] + er, largest,
               dropout.Scale(d, s, edges.Self(d, e), k) * HeadDot(grad_agg.data(), ts + k * f, f));
    }
    const float lse = sums.Lse(largest);
    const float c = sums.C();
    if (owner) {
      float* stats = statistics.row(d - b.rows.begin);
      stats[k] = er;
      stats[heads + k] = lse;
      stats[2 * heads + k] = c;
      stats[3 * heads + k] = sums.GradEr();
    }
    for (uint64_t e = 0; e < edges.Edges(d); ++e) {
      edges.Prefetch(scattered, d, e);
      const uint64_t s = edges.Source(d, e);
      const float* ts = transformed.row(s);
      const float raw = ts[w + k] + er;
      const float alpha = std::exp(LeakyOf(raw) - lse);
      const float scale = dropout.Scale(d, s, edges.Self(d, e), k);
      float* to = scattered.row(s);
      AxpyRow(to + k * f + lane.first, alpha * scale, grad_agg.data() + lane.first,
              lane.end - lane.first);
      if (owner) {
        const float grad_alpha = scale * HeadDot(grad_agg.data(), ts + k * f, f);
        to[w + k] += alpha * (grad_alpha - c) * LeakySlopeAt(raw);
      }
    }
  }
}

}  // namespace

GraphAttention GraphAttention::Heads(size_t first, size_t count) const {
  // Averaged heads share their output: they are never grouped.
  if (first + count > heads || count == 0 || (!concat && count != heads)) {
    throw Error::Internal("graph attention: a group of heads outside the layer");
  }
  GraphAttention group = *this;
  group.heads = count;
  group.attn_l = attn_l.RowRange(first, count);
  group.attn_r = attn_r.RowRange(first, count);
  group.first_head = first_head + first;
  group.layer_heads = LayerHeads();
  return group;
}

void GroupRows(const GraphAttention& a, size_t first, size_t count,
               MatrixSpan<const float> transformed, MatrixSpan<float> group) {
  const size_t f = a.per_head, w = a.width();
  for (size_t r = 0; r < group.rows(); ++r) {
    CopyRow(group.row(r), transformed.row(r) + first * f, count * f);
    CopyRow(group.row(r) + count * f, transformed.row(r) + w + first, count);
  }
}

void SourceScores(const GraphAttention& a, MatrixSpan<float> transformed, unsigned threads) {
  const size_t rows = transformed.rows();
  HeadDots<float>(transformed.Sub(0, 0, rows, a.width()), a.attn_l,
                  transformed.Sub(0, a.width(), rows, a.heads), threads);
}

void AttendBlock(const AdjacencyBlock& b, const GraphAttention& a,
                 MatrixSpan<const float> transformed, MatrixSpan<float> out, unsigned threads) {
  CheckShapes(b, transformed, a.transformed_width(), out, a.out_dim());
  ForBlockRows(
      b, a, transformed, threads,
      [&](const BlockEdges& edges, const EdgeDropout& dropout, uint64_t begin, uint64_t end) {
        AttendRows(b, a, edges, dropout, transformed, out, begin, end);
      });
}

void AttentionStatistics(const AdjacencyBlock& b, const GraphAttention& a,
                         MatrixSpan<const float> transformed, MatrixSpan<const float> grad_out,
                         MatrixSpan<float> statistics, unsigned threads) {
  CheckShapes(b, transformed, a.transformed_width(), grad_out, a.out_dim());
  CheckShapes(b, transformed, a.transformed_width(), statistics, a.statistics_width());
  ForBlockRows(
      b, a, transformed, threads,
      [&](const BlockEdges& edges, const EdgeDropout& dropout, uint64_t begin, uint64_t end) {
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
  CheckShapes(b, gradient, a.gradient_width(), transformed, a.transformed_width());
  CheckShapes(b, gradient, a.gradient_width(), source, a.source_width());
  ForBlockRows(
      b, a, gradient, threads,
      [&](const BlockEdges& edges, const EdgeDropout& dropout, uint64_t begin, uint64_t end) {
        SourceGradientRows(b, a, edges, dropout, gradient, transformed, source, begin, end);
      });
}

void AttentionScatter(const AdjacencyBlock& b, const GraphAttention& a,
                      MatrixSpan<const float> transformed, MatrixSpan<const float> grad_out,
                      MatrixSpan<float> statistics, MatrixSpan<float> scattered, unsigned threads) {
  CheckShapes(b, transformed, a.transformed_width(), grad_out, a.out_dim());
  CheckShapes(b, transformed, a.transformed_width(), statistics, a.statistics_width());
  if (scattered.rows() != transformed.rows() || scattered.cols() != a.transformed_width()) {
    throw Error::Internal("graph attention: the scatter's rows do not match the graph");
  }
  const BlockEdges edges(b, transformed.cols());
  const EdgeDropout dropout(a, edges.nodes());
  const uint64_t rows = b.rows.end - b.rows.begin;
  const uint64_t work = (b.indptr[b.rows.end] - b.indptr[b.rows.begin] + rows) * 3 * a.width();
  const unsigned lane_threads = PartsFor(threads, work);
  const std::vector<ScatterLane> lanes = ScatterLanes(a, lane_threads);
  ParallelFor(lane_threads, lanes.size(), [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      ScatterRows(b, a, edges, dropout, transformed, grad_out, statistics, scattered, lanes[i]);
    }
  });
}

void ScatteredSourceRows(const GraphAttention& a, MatrixSpan<const float> scattered,
                         MatrixSpan<const float> statistics, MatrixSpan<float> source) {
  const size_t w = a.width(), heads = a.heads;
  for (size_t r = 0; r < source.rows(); ++r) {
    float* row = source.row(r);
    CopyRow(row, scattered.row(r), w + heads);
    CopyRow(row + w + heads, statistics.row(r) + 3 * heads, heads);
    AddScoreTerms(a, row);
  }
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
