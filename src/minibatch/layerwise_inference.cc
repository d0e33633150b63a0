#include "minibatch/layerwise_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

#include "common/float16.h"
#include "common/interrupt.h"
#include "common/progress.h"
#include "minibatch/node_set.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "nn/sparse.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kPrefetchEdges = 8;               // input-first: sums fetched this far ahead
constexpr uint64_t kBlockEdges = uint64_t{1} << 17;  // a block's edges, unless one has more

// sets[k], k = 0..hops: the nodes within k in-hops of `seeds` (sets[0]). Hop k reads the rows of
// the nodes first reached at hop k - 1, in one pass over the adjacency.
std::vector<NodeSet> InNeighbourhoodClosure(const CscGraph& graph, NodeSet seeds, size_t hops,
                                            MemoryBudget& budget) {
  std::vector<NodeSet> sets;
  sets.reserve(hops + 1);
  sets.push_back(std::move(seeds));
  for (size_t k = 1; k <= hops; ++k) {
    const NodeSet& last = sets[k - 1];
    const NodeSet* before = k >= 2 ? &sets[k - 2] : nullptr;
    NodeSet next(last, budget, "layer-wise node sets");
    if (before == nullptr || before->size() < last.size()) {
      graph.ForEachRowBlock([&](uint64_t begin, uint64_t end, std::span<const uint64_t> sources) {
        const uint64_t base = graph.EdgeBegin(begin);
        last.ForEach(begin, end, [&](uint64_t v) {
          if (before != nullptr && before->Contains(v)) return;
          const uint64_t first = graph.EdgeBegin(v) - base;
          for (uint64_t e = first; e < first + graph.InDegree(v); ++e) next.Insert(sources[e]);
        });
        ThrowIfInterrupted();
      });
    }
    next.Finish();
    sets.push_back(std::move(next));
  }
  return sets;
}

// Calls fn(first, ids) for consecutive groups of up to kGroupRows members of `set` in id order;
// `first` is the rank of ids[0]. Groups start at multiples of kGroupRows, so none crosses a chunk
// of an activation's rows.
void ForEachGroup(const NodeSet& set,
                  const std::function<void(uint64_t, std::span<const uint64_t>)>& fn) {
  std::vector<uint64_t> ids;
  ids.reserve(kGroupRows);
  uint64_t first = 0;
  set.ForEach(0, set.num_nodes(), [&](uint64_t v) {
    ids.push_back(v);
    if (ids.size() < kGroupRows) return;
    fn(first, ids);
    first += ids.size();
    ids.clear();
  });
  if (!ids.empty()) fn(first, ids);
}

using RowsFn = std::function<void(uint64_t first, std::span<const uint64_t> ids,
                                  MatrixSpan<const float> rows)>;

struct RangeEdge {
  uint32_t destination;  // in the range
  uint32_t source;       // row in its group
};

// One run: the closure's node sets, the plan, and the matrices that pass from one layer's pass
// to the next.
class LayerwiseRun {
 public:
  // Plans the run; an input error when the budget, less `keep_free`, cannot hold it.
  LayerwiseRun(Session& session, const LayerwiseOptions& options, std::vector<NodeSet> sets,
               uint64_t keep_free = 0);

  LayerwiseStats Run(const LogitsFn& each);

 private:
  size_t layers() const { return plan_.layers(); }
  const NodeSet& Sources(size_t l) const { return sets_[layers() - l]; }
  const NodeSet& Destinations(size_t l) const { return sets_[layers() - 1 - l]; }
  // Row r of the transformed rows: a block's destinations go in rows [0, kBlockDestinations),
  // the k-th source's row is kBlockDestinations + k.
  float* TransformedRow(uint64_t r) { return transformed_.data() + r * transformed_width_; }
  // ForEachGroup with the members' feature rows, gathered through the store and prepared as the
  // model takes them; the next group's reads are in flight while fn works on one.
  void ForEachFeatureGroup(const NodeSet& set, const RowsFn& fn);
  // Calls fn for consecutive groups of layer l's input rows (ForEachGroup's groups).
  void ForEachInputGroup(size_t l, const RowsFn& fn);
  void Transform(size_t l);
  void Aggregate(size_t l);
  // Layer l input-first, one pass over its input per range of destinations.
  void AggregateInputs(size_t l);
  // The edges of destinations `ids` (ranks [first, first + ids.size()) of layer l's), grouped
  // by the group of the source's row in the input: entries [index[g], index[g + 1]) of `edges`
  // for group g, each (destination - first, source's row in the group).
  void GroupRangeEdges(size_t l, std::span<const uint64_t> ids, std::span<uint64_t> index,
                       std::span<RangeEdge> edges) const;

  Session& session_;
  MiniBatchModel& model_;
  std::vector<NodeSet> sets_;
  LayerwisePlan plan_;
  std::string scratch_dir_;  // empty: activations in memory
  bool half_on_disk_ = false;
  size_t transformed_width_ = 0;
  ChargedArray<float> transformed_;
  ChargedArray<float> norm_;      // GCN: of the transformed rows' nodes
  IntermediateRows self_;         // SAGE: the destinations' self terms
  IntermediateRows activations_;  // the last layer's output
  std::unique_ptr<ProgressBar> progress_;
  LayerwiseStats stats_;
};

// Whether the input layer reads float16 values as stored (row normalisation makes float32 ones).
bool FeaturesHalf(const Session& session) {
  return session.dataset().meta().feature_dtype == FeatureDtype::kFloat16 &&
         !session.options().features.row_normalize;
}

LayerwiseRun::LayerwiseRun(Session& session, const LayerwiseOptions& options,
                           std::vector<NodeSet> sets, uint64_t keep_free)
    : session_(session),
      model_(session.model()),
      sets_(std::move(sets)),
      plan_(session.graph(), LayerSpecsOf(model_.config()), sets_, options, FeaturesHalf(session)) {
  MemoryBudget& budget = session.budget();
  const uint64_t available = budget.available() - std::min(budget.available(), keep_free);
  stats_.budget_in_memory = budget.used() + keep_free + plan_.TransformedPeakBytes(false);
  stats_.budget_on_disk = budget.used() + keep_free + plan_.TransformedPeakBytes(true);
  const uint64_t needed = plan_.Fit(available);
  for (size_t l = 0; l < layers(); ++l) {
    const LayerPlan& p = plan_.layer(l);
    stats_.input_rows.push_back(p.sources);
    stats_.output_rows.push_back(p.destinations);
    if (p.range_rows == 0 &&
        kBlockDestinations + p.sources > std::numeric_limits<uint32_t>::max()) {
      throw Error::Input(fmt::format(
          "layer-wise inference: a layer has {} input rows, more than a block's 32-bit ids "
          "reach; evaluate fewer nodes, or in batches",
          p.sources));
    }
  }
  stats_.passes.assign(layers(), 0);
  stats_.activations_on_disk = plan_.activations_on_disk();
  if (needed > available) {
    throw Error::Input(fmt::format(
        "layer-wise inference needs {} where --memory-budget {} leaves {}: beside the "
        "activations' chunk buffers, a GAT layer holds its transformed input rows, a SAGE or GCN "
        "layer the sums of at least one destination; raise --memory-budget to at least {}",
        FormatBytes(needed), FormatBytes(budget.limit()), FormatBytes(available),
        FormatBytesRoundedUp(budget.used() + keep_free + needed)));
  }
  if (stats_.activations_on_disk) scratch_dir_ = ScratchDirectory(options.scratch_dir);
  half_on_disk_ = options.half_on_disk;
  if (session.options().progress) progress_ = std::make_unique<ProgressBar>("layer-wise", 0);
}

LayerwiseStats LayerwiseRun::Run(const LogitsFn& each) {
  for (size_t l = 0; l < layers(); ++l) {
    if (plan_.layer(l).range_rows > 0) {
      AggregateInputs(l);
    } else {
      Transform(l);
      Aggregate(l);
    }
  }
  activations_.BeginRead();
  ForEachGroup(sets_[0], [&](uint64_t first, std::span<const uint64_t> ids) {
    each(ids, activations_.Read(first, first + ids.size()));
  });
  activations_.EndRead();
  stats_.scratch += activations_.stats();
  if (progress_) {
    progress_->Finish();
    std::string rows;
    for (size_t l = 0; l < layers(); ++l) {
      rows += fmt::format("{}{} -> {}", l ? ", " : "", stats_.input_rows[l], stats_.output_rows[l]);
      if (stats_.passes[l] > 0) rows += fmt::format(" (input-first, {} passes)", stats_.passes[l]);
    }
    fmt::print(stderr,
               "layer-wise inference of {} nodes: rows per layer {} (of {}); activations {}\n",
               sets_[0].size(), rows, sets_[0].num_nodes(),
               stats_.activations_on_disk ? fmt::format("row-blocked on disk ({} written{})",
                                                        FormatBytes(stats_.scratch.bytes_written),
                                                        half_on_disk_ ? " as float16" : "")
                                          : std::string("in memory"));
  }
  return stats_;
}

void LayerwiseRun::ForEachFeatureGroup(const NodeSet& set, const RowsFn& fn) {
  FeatureStore& store = session_.store();
  const uint64_t dim = store.dim();
  ChargedArray<float> rows(session_.budget(), kFeatureGroups * kGroupRows * dim,
                           "layer-wise input features");
  struct Group {
    std::vector<uint64_t> ids;
    uint64_t first = 0;
    FeatureStore::Ticket ticket = 0;
    bool pending = false;
  };
  Group groups[kFeatureGroups];
  auto values = [&](uint64_t b) {
    return std::span<float>(rows.data() + b * kGroupRows * dim, groups[b].ids.size() * dim);
  };
  auto finish = [&](uint64_t b) {
    Group& g = groups[b];
    if (!g.pending) return;
    g.pending = false;
    store.Wait(g.ticket);
    model_.PrepareFeatures(values(b));
    fn(g.first, g.ids, MatrixSpan<const float>(values(b).data(), g.ids.size(), dim));
  };
  uint64_t b = 0;  // the buffer the next group goes into: the oldest group's, finished first
  try {
    ForEachGroup(set, [&](uint64_t first, std::span<const uint64_t> ids) {
      finish(b);
      Group& g = groups[b];
      g.ids.assign(ids.begin(), ids.end());
      g.first = first;
      g.ticket = store.Submit(g.ids, values(b));
      g.pending = true;
      b = (b + 1) % kFeatureGroups;
    });
    for (uint64_t i = 0; i < kFeatureGroups; ++i) finish((b + i) % kFeatureGroups);
  } catch (...) {
    // No read may land in the buffers once they are freed.
    for (Group& g : groups) {
      if (!g.pending) continue;
      try {
        store.Wait(g.ticket);
      } catch (const std::exception&) {
        // The first error is the one reported.
      }
    }
    throw;
  }
}

void LayerwiseRun::ForEachInputGroup(size_t l, const RowsFn& fn) {
  if (plan_.layer(l).reads_features) {
    ForEachFeatureGroup(Sources(l), fn);
    return;
  }
  activations_.BeginRead();
  ForEachGroup(Sources(l), [&](uint64_t first, std::span<const uint64_t> ids) {
    fn(first, ids, activations_.Read(first, first + ids.size()));
  });
  activations_.EndRead();
}

void LayerwiseRun::Transform(size_t l) {
  const LayerPlan& p = plan_.layer(l);
  const BasicLayer<float>& layer = model_.model().layer(l);
  const NodeSet& destinations = Destinations(l);
  MemoryBudget& budget = session_.budget();
  transformed_ = ChargedArray<float>(budget, (kBlockDestinations + p.sources) * p.gathered,
                                     "layer-wise transformed rows");
  transformed_width_ = p.gathered;
  if (p.gcn) {
    norm_ =
        ChargedArray<float>(budget, kBlockDestinations + p.sources, "layer-wise transformed rows");
    uint64_t rank = 0;
    const std::span<const float> norm = model_.gcn_norm();
    Sources(l).ForEach(0, Sources(l).num_nodes(),
                       [&](uint64_t v) { norm_[kBlockDestinations + rank++] = norm[v]; });
  }
  ChargedArray<float> own;  // the destinations among a group's rows
  if (p.self > 0) {
    self_ = IntermediateRows(p.destinations, p.self, p.chunk_rows, scratch_dir_, budget,
                             "layer-wise self terms", half_on_disk_);
    self_.BeginWrite(p.self);
    own = ChargedArray<float>(budget, kGroupRows * p.in, "layer-wise destination rows");
  }
  if (progress_) progress_->Restart(fmt::format("layer-wise: layer {} transform", l), p.sources);
  uint64_t self_rank = 0;  // the next destination's row in self_
  const RowsFn transform = [&](uint64_t first, std::span<const uint64_t> ids,
                               MatrixSpan<const float> in) {
    layer.TransformSources(in,
                           {TransformedRow(kBlockDestinations + first), ids.size(), p.gathered});
    if (progress_) progress_->Update(first + ids.size());
    ThrowIfInterrupted();
    if (p.self == 0) return;
    MatrixSpan<const float> rows = in;
    uint64_t count = 0;
    for (uint64_t v : ids) count += destinations.Contains(v);
    if (count < ids.size()) {
      MatrixSpan<float> copy(own.data(), count, p.in);
      for (uint64_t i = 0, k = 0; i < ids.size(); ++i) {
        if (destinations.Contains(ids[i])) std::copy_n(in.row(i), p.in, copy.row(k++));
      }
      rows = copy;
    }
    // Pieces of self_ lie inside one chunk.
    for (uint64_t done = 0; done < count;) {
      const uint64_t begin = self_rank + done;
      const uint64_t end = std::min(self_rank + count, (begin / p.chunk_rows + 1) * p.chunk_rows);
      layer.TransformSelf(rows.RowRange(done, end - begin), self_.Write(begin, end));
      done = end - self_rank;
    }
    self_rank += count;
  };
  ForEachInputGroup(l, transform);
  stats_.scratch += activations_.stats();
  activations_ = IntermediateRows();
  if (p.self > 0) self_.EndWrite();
}

void LayerwiseRun::Aggregate(size_t l) {
  const LayerPlan& p = plan_.layer(l);
  BasicLayer<float>& layer = model_.model().layer(l);
  const NodeSet& sources = Sources(l);
  const CscGraph& graph = session_.graph();
  IntermediateRows output(p.destinations, p.out, p.chunk_rows, scratch_dir_, session_.budget(),
                          "layer-wise activations", half_on_disk_);
  output.BeginWrite(p.out);
  if (p.self > 0) self_.BeginRead();
  if (progress_) {
    progress_->Restart(fmt::format("layer-wise: layer {} aggregate", l), p.destinations);
  }
  const bool hidden = l + 1 < layers();
  std::vector<uint64_t> block;         // consecutive destinations
  std::vector<uint32_t> indptr = {0};  // their edges
  std::vector<uint32_t> indices;       // the sources' ranks, made local ids when aggregated
  uint64_t first = 0;                  // block[0]'s row among the destinations
  // A block's destinations are its first sources (nn/sparse.h): their transformed rows are
  // copied to the rows just before the sources', so that the gathered rows are one matrix.
  auto aggregate = [&] {
    const uint64_t nd = block.size();
    const uint64_t head = kBlockDestinations - nd;
    for (uint64_t i = 0; i < nd; ++i) {
      const uint64_t rank = sources.Rank(block[i]);
      std::copy_n(TransformedRow(kBlockDestinations + rank), p.gathered, TransformedRow(head + i));
      if (p.gcn) norm_[head + i] = norm_[kBlockDestinations + rank];
    }
    for (uint32_t& s : indices) s += static_cast<uint32_t>(nd);
    const BlockCsr local{
        static_cast<uint32_t>(nd), static_cast<uint32_t>(nd + p.sources), indptr, indices, {}};
    MatrixSpan<const float> rows(TransformedRow(head), nd + p.sources, p.gathered);
    std::span<const float> norm;
    if (p.gcn) norm = {norm_.data() + head, nd + p.sources};
    MatrixSpan<const float> self;
    if (p.self > 0) self = self_.Read(first, first + nd);
    MatrixSpan<float> out = output.Write(first, first + nd);
    layer.Aggregate(local, rows, self, norm, out);
    if (hidden) model_.model().HiddenActivation(out);
    model_.ChargeModelMemory();
    first += nd;
    block.clear();
    indptr.resize(1);
    indices.clear();
    if (progress_) progress_->Update(first);
    ThrowIfInterrupted();
  };
  graph.ForEachRowBlock([&](uint64_t begin, uint64_t end, std::span<const uint64_t> neighbours) {
    const uint64_t base = graph.EdgeBegin(begin);
    Destinations(l).ForEach(begin, end, [&](uint64_t v) {
      const uint64_t degree = graph.InDegree(v);
      // Blocks end inside a chunk of the rows they write.
      if (!block.empty() &&
          (block.size() == kBlockDestinations || indices.size() + degree > kBlockEdges ||
           (first + block.size()) % p.chunk_rows == 0)) {
        aggregate();
      }
      block.push_back(v);
      const uint64_t edge = graph.EdgeBegin(v) - base;
      for (uint64_t e = edge; e < edge + degree; ++e) {
        indices.push_back(static_cast<uint32_t>(sources.Rank(neighbours[e])));
      }
      indptr.push_back(static_cast<uint32_t>(indices.size()));
    });
  });
  if (!block.empty()) aggregate();
  output.EndWrite();
  if (p.self > 0) {
    self_.EndRead();
    stats_.scratch += self_.stats();
    self_ = IntermediateRows();
  }
  transformed_.Reset();
  norm_.Reset();
  activations_ = std::move(output);
}

void LayerwiseRun::GroupRangeEdges(size_t l, std::span<const uint64_t> ids,
                                   std::span<uint64_t> index, std::span<RangeEdge> edges) const {
  const NodeSet& sources = Sources(l);
  const CscGraph& graph = session_.graph();
  // fn(destination in the range, source's rank) for the range's edges, in edge order.
  auto for_each_edge = [&](const auto& fn) {
    uint64_t i = 0;  // ids[i]: the next destination
    graph.ForEachRowBlock(
        [&](uint64_t begin, uint64_t end, std::span<const uint64_t> neighbours) {
          const uint64_t base = graph.EdgeBegin(begin);
          for (; i < ids.size() && ids[i] < end; ++i) {
            const uint64_t first = graph.EdgeBegin(ids[i]) - base;
            for (uint64_t e = first; e < first + graph.InDegree(ids[i]); ++e) {
              fn(i, sources.Rank(neighbours[e]));
            }
          }
          ThrowIfInterrupted();
        },
        CscGraph::kScanChunkEdges, ids.front(), ids.back() + 1);
  };
  // A counting sort by group: count, then place each edge at its group's cursor, which ends
  // at the next group's first edge.
  std::fill(index.begin(), index.end(), 0);
  for_each_edge([&](uint64_t, uint64_t rank) { ++index[rank / kGroupRows + 1]; });
  std::partial_sum(index.begin(), index.end(), index.begin());
  for_each_edge([&](uint64_t d, uint64_t rank) {
    edges[index[rank / kGroupRows]++] = {static_cast<uint32_t>(d),
                                         static_cast<uint32_t>(rank % kGroupRows)};
  });
  std::copy_backward(index.begin(), index.end() - 1, index.end());
  index[0] = 0;
}

void LayerwiseRun::AggregateInputs(size_t l) {
  const LayerPlan& p = plan_.layer(l);
  const BasicLayer<float>& layer = model_.model().layer(l);
  const NodeSet& destinations = Destinations(l);
  const CscGraph& graph = session_.graph();
  MemoryBudget& budget = session_.budget();
  const std::span<const float> norm = p.gcn ? model_.gcn_norm() : std::span<const float>();
  const size_t in = p.in;
  IntermediateRows output(p.destinations, p.out, p.chunk_rows, scratch_dir_, budget,
                          "layer-wise activations", half_on_disk_);
  ChargedArray<float> sums(budget, p.range_rows * in, "layer-wise input sums");
  const bool keep_own = p.self > 0 && !p.RereadsOwnRows();
  ChargedArray<float> own(budget, keep_own && !p.half_input ? p.range_rows * in : 0,
                          "layer-wise input sums");
  ChargedArray<uint16_t> own_half(budget, keep_own && p.half_input ? p.range_rows * in : 0,
                                  "layer-wise input sums");
  ChargedArray<float> widened(budget, p.ChunkOwnRows() ? kGroupRows * in : 0,
                              "layer-wise input sums");
  ChargedArray<uint64_t> ids(budget, p.range_rows, "layer-wise input sums");
  ChargedArray<RangeEdge> edges(budget, p.range_edges, "layer-wise range edges");
  ChargedArray<uint64_t> index(budget, (p.sources + kGroupRows - 1) / kGroupRows + 1,
                               "layer-wise range edges");
  output.BeginWrite(p.out);
  const bool hidden = l + 1 < layers();
  const unsigned threads = std::max(1u, session_.options().threads);
  uint64_t first = 0;  // the range's first destination's rank
  uint64_t next = 0;   // where the next range's destinations are looked for
  while (first < p.destinations) {
    uint64_t count = 0;
    uint64_t range_edges = 0;
    for (; next < destinations.num_nodes() && count < p.range_rows; ++next) {
      if (!destinations.Contains(next)) continue;
      const uint64_t degree = graph.InDegree(next);
      if (count > 0 && range_edges + degree > p.range_edges) break;
      ids[count++] = next;
      range_edges += degree;
    }
    const std::span<const uint64_t> range(ids.data(), count);
    GroupRangeEdges(l, range, {index.data(), index.size()}, {edges.data(), range_edges});
    std::fill_n(sums.data(), count * in, 0.0f);
    if (progress_) {
      progress_->Restart(fmt::format("layer-wise: layer {} pass {}", l, stats_.passes[l] + 1),
                         p.sources);
    }
    ForEachInputGroup(l, [&](uint64_t group_first, std::span<const uint64_t> group,
                             MatrixSpan<const float> rows) {
      // The group's edges, in destination order, split between threads where the
      // destination changes, so that each sum has one writer.
      const uint64_t g = group_first / kGroupRows;
      const uint64_t parts = PartsFor(threads, (index[g + 1] - index[g]) * in);
      ParallelFor(parts, parts, [&](uint64_t part, uint64_t) {
        auto split = [&](uint64_t k) {
          uint64_t e = index[g] + (index[g + 1] - index[g]) * k / parts;
          while (k > 0 && k < parts && e > index[g] && e < index[g + 1] &&
                 edges[e].destination == edges[e - 1].destination) {
            ++e;
          }
          return e;
        };
        for (uint64_t e = split(part), end = split(part + 1); e < end; ++e) {
          // The sums are scattered across gigabytes: fetch a later edge's row ahead.
          if (e + kPrefetchEdges < end) {
            const float* ahead = sums.data() + edges[e + kPrefetchEdges].destination * in;
            for (size_t k = 0; k < in; k += 64 / sizeof(float)) __builtin_prefetch(ahead + k, 1);
          }
          const RangeEdge edge = edges[e];
          const float weight = p.gcn ? norm[group[edge.source]] : 1.0f;
          AxpyRow(sums.data() + edge.destination * in, weight, rows.row(edge.source), in);
        }
      });
      // The range's own rows among the group's: SAGE's self rows, GCN's self loops.
      if (!p.RereadsOwnRows() && group.back() >= range.front() && group.front() <= range.back()) {
        for (size_t i = 0; i < group.size(); ++i) {
          const uint64_t v = group[i];
          if (v < range.front() || v > range.back() || !destinations.Contains(v)) continue;
          const uint64_t d = destinations.Rank(v) - first;
          if (keep_own) {
            if (p.half_input) {
              FloatsToHalves({rows.row(i), in}, own_half.data() + d * in);
            } else {
              std::copy_n(rows.row(i), in, own.data() + d * in);
            }
          } else {
            AxpyRow(sums.data() + d * in, norm[v], rows.row(i), in);
          }
        }
      }
      if (progress_) progress_->Update(group_first + group.size());
      ThrowIfInterrupted();
    });
    // SAGE averages; GCN's normalisation of the destination.
    for (uint64_t d = 0; d < count; ++d) {
      const uint64_t degree = graph.InDegree(range[d]);
      const float scale = p.gcn ? norm[range[d]] : degree > 0 ? 1.0f / degree : 0.0f;
      ScaleRow(sums.data() + d * in, scale, in);
    }
    // The range's outputs, in pieces within chunks of the output, each at most kGroupRows rows
    // (the own rows' buffer).
    for (uint64_t done = 0; done < count;) {
      const uint64_t begin = first + done;
      const uint64_t chunk_end = (begin / p.chunk_rows + 1) * p.chunk_rows;
      const uint64_t end = std::min({first + count, chunk_end, begin + kGroupRows});
      MatrixSpan<const float> self;
      if (p.RereadsOwnRows()) {
        const std::span<float> rows(widened.data(), (end - begin) * in);
        session_.store().Gather(range.subspan(done, end - begin), rows);
        model_.PrepareFeatures(rows);
        self = {rows.data(), end - begin, in};
      } else if (keep_own && p.half_input) {
        HalvesToFloats({own_half.data() + done * in, (end - begin) * in}, widened.data());
        self = {widened.data(), end - begin, in};
      } else if (keep_own) {
        self = {own.data() + done * in, end - begin, in};
      }
      MatrixSpan<float> out = output.Write(begin, end);
      layer.CombineAggregated(self, {sums.data() + done * in, end - begin, in}, out);
      if (hidden) model_.model().HiddenActivation(out);
      done = end - first;
    }
    first += count;
    ++stats_.passes[l];
  }
  output.EndWrite();
  stats_.scratch += activations_.stats();
  activations_ = std::move(output);
}

}  // namespace

LayerwiseStats RunLayerwise(Session& session, std::span<const uint64_t> nodes,
                            const LayerwiseOptions& options, const LogitsFn& each) {
  const CscGraph& graph = session.graph();
  MemoryBudget& budget = session.budget();
  NodeSet seeds = NodeSetOf(nodes, graph.num_nodes(), budget, "layer-wise node sets");
  if (seeds.size() == 0) return {};
  LayerwiseRun run(
      session, options,
      InNeighbourhoodClosure(graph, std::move(seeds), session.model().config().layers, budget));
  return run.Run(each);
}

LayerwiseNeeds SizeLayerwise(const Session& session, const ModelConfig& config,
                             std::span<const uint64_t> nodes, const LayerwiseOptions& options) {
  // The closure is found here only to size the run: its sets, which the run holds beside its
  // buffers, count with them. Bit sets, an eighth of a byte a node each.
  MemoryBudget sizing(std::numeric_limits<uint64_t>::max() / 2);
  const CscGraph& graph = session.graph();
  NodeSet seeds = NodeSetOf(nodes, graph.num_nodes(), sizing, "layer-wise node sets");
  std::vector<NodeSet> sets;
  if (seeds.size() > 0)
    sets = InNeighbourhoodClosure(graph, std::move(seeds), config.layers, sizing);
  const uint64_t sets_bytes = sets.empty() ? 0 : sizing.used();
  return LayerwiseNeeds(
      sets_bytes, LayerwisePlan(graph, LayerSpecsOf(config), sets, options, FeaturesHalf(session)));
}

LayerwiseOptions LayerwiseOptionsOf(const Session& session) {
  LayerwiseOptions options;
  options.scratch_dir = session.options().scratch_dir;
  options.half_on_disk = session.options().scratch_float16;
  return options;
}

}  // namespace strata
