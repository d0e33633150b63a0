#include "strata/neighbor_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "common/parallel.h"
#include "common/random.h"
#include "sampling/labor_importance.h"
#include "sampling/labor_variates.h"
#include "sampling/local_ids.h"
#include "strata/error.h"

namespace strata {
namespace {

// Independent random streams of one sampler seed: the epoch shuffles, the training batches
// and the batches of given seeds never share numbers.
constexpr uint64_t kShuffleStream = 1;
constexpr uint64_t kBatchStream = 2;
constexpr uint64_t kSeedListStream = 3;

// Epoch permutations kept at once: a pipeline running ahead across an epoch boundary asks
// for the next epoch while the last batches of the current one are still being sampled.
constexpr size_t kCachedEpochs = 2;

// Up to this many picks, Floyd's membership test scans the picks so far; above it a bitmap
// over the destination's edges keeps the test O(1).
constexpr uint64_t kLinearScanPicks = 32;

// `count` distinct positions in [0, degree), count < degree, uniformly (Floyd's algorithm:
// every subset equally likely), written ascending to out[0 .. count). `bitmap` is scratch,
// all zero between calls.
void ChooseDistinct(Rng& rng, uint64_t degree, uint64_t count, uint64_t* out,
                    std::vector<uint64_t>& bitmap) {
  if (count <= kLinearScanPicks) {
    for (uint64_t j = degree - count, n = 0; j < degree; ++j, ++n) {
      const uint64_t t = rng.Below(j + 1);
      out[n] = std::find(out, out + n, t) == out + n ? t : j;  // j is never taken before step j
    }
  } else {
    if (bitmap.size() * 64 < degree) bitmap.resize((degree + 63) / 64, 0);
    for (uint64_t j = degree - count, n = 0; j < degree; ++j, ++n) {
      uint64_t t = rng.Below(j + 1);
      if (bitmap[t / 64] >> (t % 64) & 1) t = j;
      bitmap[t / 64] |= uint64_t{1} << (t % 64);
      out[n] = t;
    }
    for (uint64_t n = 0; n < count; ++n) bitmap[out[n] / 64] = 0;
  }
  std::sort(out, out + count);
}

}  // namespace

// What one Sample call needs besides its result; borrowed from the pool for the call.
struct NeighborSampler::Scratch {
  std::vector<EdgeRange> edge_ranges;     // one layer's destinations' in-edges
  std::vector<uint64_t> picked;           // their chosen edges, then those edges' sources
  std::vector<LocalIdScratch> local_ids;  // per layer: the layers' sizes differ widely
  // LABOR: where each destination's kept edges wait (UINT64_MAX: it keeps all of them), and
  // those edges, as offsets in the destination's list, with their weights.
  std::vector<uint64_t> labor_at;
  std::vector<uint32_t> labor_kept;
  std::vector<float> labor_weight;
  // LABOR-*: the layer's in-edges by destination (edge_at), each edge's source and its number
  // as a candidate (candidate_of; the table per layer, as local_ids), the candidates' ids,
  // importance, variates, the fixed point's scratch, and each destination's scale
  // (sampling/labor_importance.h).
  std::vector<LocalIdScratch> candidate_numbers;
  std::vector<uint32_t> edge_at;
  std::vector<uint64_t> candidate_sources;
  std::vector<uint32_t> candidate_of;
  std::vector<uint64_t> candidate_ids;
  std::vector<double> importance;
  LaborImportanceScratch importance_scratch;
  std::vector<double> variate;
  std::vector<double> scale;
};

class NeighborSampler::ScratchLease {
 public:
  explicit ScratchLease(const NeighborSampler& sampler) : sampler_(sampler) {
    std::lock_guard lock(sampler_.scratch_mutex_);
    if (sampler_.free_scratch_.empty()) {
      scratch_ = std::make_unique<Scratch>();
    } else {
      scratch_ = std::move(sampler_.free_scratch_.back());
      sampler_.free_scratch_.pop_back();
    }
  }
  ~ScratchLease() {
    std::lock_guard lock(sampler_.scratch_mutex_);
    sampler_.free_scratch_.push_back(std::move(scratch_));
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch* operator->() { return scratch_.get(); }
  Scratch& operator*() { return *scratch_; }

 private:
  const NeighborSampler& sampler_;
  std::unique_ptr<Scratch> scratch_;
};

NeighborSampler::NeighborSampler(const CscGraph& graph, std::vector<uint64_t> train_ids,
                                 std::vector<int> fanouts, uint64_t batch_size, uint64_t seed,
                                 MemoryBudget& budget, unsigned threads, SeedOrder order)
    : NeighborSampler(std::vector<const CscGraph*>{&graph}, std::move(train_ids),
                      std::move(fanouts), batch_size, seed, budget, threads, order) {}

NeighborSampler::NeighborSampler(std::vector<const CscGraph*> layer_graphs,
                                 std::vector<uint64_t> train_ids, std::vector<int> fanouts,
                                 uint64_t batch_size, uint64_t seed, MemoryBudget& budget,
                                 unsigned threads, SeedOrder order)
    : graph_(*layer_graphs.at(0)),
      layer_graphs_(std::move(layer_graphs)),
      budget_(budget),
      fanouts_(std::move(fanouts)),
      batch_size_(batch_size),
      seed_(seed),
      threads_(std::max(1u, threads)),
      order_(order) {
  if (fanouts_.empty()) throw Error::Input("the sampler needs at least one fanout");
  for (int f : fanouts_) {
    if (f < -1) {
      throw Error::Input(fmt::format("fanout {} is not a non-negative integer or -1", f));
    }
  }
  if (batch_size_ == 0) throw Error::Input("the batch size must be positive");
  if (order_.pieces == 0) throw Error::Input("a batch must be sampled in one piece or more");
  if (order_.world_size == 0 || order_.rank >= order_.world_size) {
    throw Error::Input(
        fmt::format("rank {} is not below world size {}", order_.rank, order_.world_size));
  }
  if (layer_graphs_.size() == 1) layer_graphs_.resize(fanouts_.size(), &graph_);
  for (const CscGraph* layer_graph : layer_graphs_) {
    if (layer_graphs_.size() != fanouts_.size() || layer_graph->num_nodes() != graph_.num_nodes()) {
      throw Error::Internal("a sampler needs one graph, or one per layer, over the same nodes");
    }
  }
  train_ids_ = ChargedArray<uint64_t>(budget, train_ids.size(), "the sampler's training ids");
  for (size_t i = 0; i < train_ids.size(); ++i) {
    if (train_ids[i] >= graph_.num_nodes()) {
      throw Error::Input(
          fmt::format("training node {} is >= num_nodes {}", train_ids[i], graph_.num_nodes()));
    }
    train_ids_[i] = train_ids[i];
  }
}

NeighborSampler::~NeighborSampler() = default;

uint64_t NeighborSampler::seeds_per_epoch() const {
  const uint64_t n = train_ids_.size(), w = order_.world_size;
  if (order_.pad) return (n + w - 1) / w;
  return n > order_.rank ? (n - order_.rank + w - 1) / w : 0;
}

uint64_t NeighborSampler::batches_per_epoch() const {
  // The largest share's count, so that every rank plans as many batches.
  const uint64_t n = (train_ids_.size() + order_.world_size - 1) / order_.world_size;
  return (order_.drop_last ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_) * order_.pieces;
}

std::shared_ptr<const NeighborSampler::Permutation> NeighborSampler::EpochPermutation(
    uint64_t epoch) const {
  // Built under the lock: callers asking for the same epoch wait for the one build instead
  // of each shuffling (and charging) a copy.
  std::lock_guard lock(permutation_mutex_);
  for (const auto& [e, permutation] : permutations_) {
    if (e == epoch) return permutation;
  }
  const uint64_t n = train_ids_.size();
  auto permutation = std::make_shared<Permutation>(budget_, n, "an epoch's shuffled seeds");
  Permutation& p = *permutation;
  std::copy(train_ids_.data(), train_ids_.data() + n, p.data());
  Rng rng(MixSeed(MixSeed(seed_, kShuffleStream), epoch));
  for (uint64_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng.Below(i)]);  // Fisher-Yates
  if (permutations_.size() >= kCachedEpochs) {
    // Drop the earliest epoch: training moves forward.
    auto oldest = std::min_element(permutations_.begin(), permutations_.end(),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
    permutations_.erase(oldest);
  }
  permutations_.emplace_back(epoch, permutation);
  return permutation;
}

std::vector<uint64_t> NeighborSampler::BatchSeeds(uint64_t epoch, uint64_t batch) const {
  if (batch >= batches_per_epoch()) {
    throw Error::Internal(
        fmt::format("batch {} asked of an epoch of {} batches", batch, batches_per_epoch()));
  }
  std::shared_ptr<const Permutation> permutation;
  const uint64_t* order = train_ids_.data();
  if (order_.shuffle) {
    permutation = EpochPermutation(epoch);
    order = permutation->data();
  }
  const uint64_t n = train_ids_.size();
  const uint64_t piece = batch % order_.pieces;
  batch /= order_.pieces;
  uint64_t begin = batch * batch_size_;
  uint64_t end = std::min(begin + batch_size_, seeds_per_epoch());
  begin = std::min(begin, end);  // an unpadded rank's last batch may be empty
  if (order_.even_batches && !order_.drop_last) {
    const uint64_t batches = batches_per_epoch() / order_.pieces;
    begin = batch * seeds_per_epoch() / batches;
    end = (batch + 1) * seeds_per_epoch() / batches;
  }
  const uint64_t size = end - begin;
  end = begin + (piece + 1) * size / order_.pieces;
  begin += piece * size / order_.pieces;
  std::vector<uint64_t> seeds;
  seeds.reserve(end - begin);
  for (uint64_t k = begin; k < end; ++k) {
    seeds.push_back(order[(order_.rank + k * order_.world_size) % n]);
  }
  return seeds;
}

LaborOptions ParseLaborOptions(std::string_view sampler, uint32_t batch_dependency,
                               std::string_view importance) {
  LaborOptions labor;
  if (sampler == "labor") {
    labor.enabled = true;
  } else if (sampler != "neighbor") {
    throw Error::Input(fmt::format("--sampler '{}': expected neighbor or labor", sampler));
  }
  if (batch_dependency == 0) throw Error::Input("--batch-dependency must be 1 or more");
  if (batch_dependency > 1 && !labor.enabled) {
    throw Error::Input("--batch-dependency needs --sampler labor");
  }
  labor.batch_dependency = batch_dependency;
  if (importance == "star") {
    labor.importance = -1;
  } else {
    uint32_t steps = 0;
    const auto [end, error] =
        std::from_chars(importance.data(), importance.data() + importance.size(), steps);
    if (error != std::errc() || end != importance.data() + importance.size() ||
        steps > static_cast<uint32_t>(kMaxLaborIterations)) {
      throw Error::Input(fmt::format(
          "--labor-importance '{}': expected 0 (LABOR-0), a number of steps up to {}, or star",
          importance, kMaxLaborIterations));
    }
    labor.importance = static_cast<int>(steps);
  }
  if (labor.importance != 0 && !labor.enabled) {
    throw Error::Input("--labor-importance needs --sampler labor");
  }
  return labor;
}

void NeighborSampler::set_labor(LaborOptions labor) {
  if (labor.enabled) {
    for (const CscGraph* graph : layer_graphs_) {
      if (!graph->indices_resident()) {
        throw Error::Input(
            "--sampler labor needs the topology in memory (each source's variate is read for "
            "every in-edge); use --topology memory or a larger --memory-budget");
      }
    }
  }
  labor_ = labor;
}

SampledBatch NeighborSampler::Sample(uint64_t epoch, uint64_t batch) const {
  std::vector<uint64_t> seeds = BatchSeeds(epoch, batch);
  // A piece draws as its whole batch: each destination's picks come from the batch's stream
  // and the node alone, LABOR's from the batch's variates.
  const uint64_t whole = batch / order_.pieces;
  const uint64_t stream = MixSeed(MixSeed(MixSeed(seed_, kBatchStream), epoch), whole);
  SampledBatch result = SampleFrom(seeds, fanouts_, stream, epoch, whole, labor_.enabled);
  result.epoch = epoch;
  result.index = batch;
  return result;
}

SampledBatch NeighborSampler::SampleSeeds(std::span<const uint64_t> seeds, uint64_t stream) const {
  // With LABOR, each stream (an evaluation chunk) its own independent variates.
  SampledBatch result =
      SampleFrom(seeds, fanouts_, MixSeed(MixSeed(seed_, kSeedListStream), stream),
                 kSeedListStream << 56, stream, labor_.enabled);
  result.index = stream;
  return result;
}

SampledBatch NeighborSampler::SampleFullNeighborhood(std::span<const uint64_t> seeds) const {
  const std::vector<int> all(fanouts_.size(), -1);
  return SampleFrom(seeds, all, 0);
}

SampledBatch NeighborSampler::SampleFrom(std::span<const uint64_t> seeds,
                                         std::span<const int> fanouts, uint64_t stream_seed,
                                         uint64_t epoch, uint64_t batch_index, bool labor) const {
  for (uint64_t v : seeds) {
    if (v >= graph_.num_nodes()) {
      throw Error::Input(fmt::format("seed node {} is >= num_nodes {}", v, graph_.num_nodes()));
    }
  }
  SampledBatch batch;
  batch.blocks.resize(fanouts.size());
  ScratchLease scratch(*this);
  if (scratch->local_ids.size() < fanouts.size()) {
    scratch->local_ids.resize(fanouts.size());
    scratch->candidate_numbers.resize(fanouts.size());
  }
  std::span<const uint64_t> dst = seeds;
  for (size_t l = fanouts.size(); l-- > 0;) {
    Block& block = batch.blocks[l];
    std::optional<LaborVariates> variates;
    if (labor) variates.emplace(seed_, epoch, l, batch_index, labor_.batch_dependency);
    PickNeighbors(*layer_graphs_[l], dst, fanouts[l], l, MixSeed(stream_seed, l),
                  variates ? &*variates : nullptr, *scratch, block);
    AssignLocalIds(dst, scratch->picked, threads_, scratch->local_ids[l], block.src_nodes,
                   block.indices);
    block.dst_count = static_cast<uint32_t>(dst.size());
    dst = block.src_nodes;  // this layer's sources are the next (lower) layer's destinations
  }
  return batch;
}

void NeighborSampler::PickNeighbors(const CscGraph& graph, std::span<const uint64_t> dst,
                                    int fanout, size_t layer, uint64_t layer_seed,
                                    const LaborVariates* labor, Scratch& scratch,
                                    Block& block) const {
  const uint64_t num_dst = dst.size();
  const unsigned workers = num_dst < kMinParallelDestinations ? 1u : threads_;
  std::vector<uint32_t>& indptr = block.indptr;
  std::vector<EdgeRange>& ranges = scratch.edge_ranges;
  std::vector<uint64_t>& picked = scratch.picked;
  indptr.resize(num_dst + 1);
  indptr[0] = 0;
  ranges.resize(num_dst);
  // LABOR tests each in-edge of a destination with more than `fanout` once, in the first pass,
  // and keeps the survivors aside until the layer's offsets are known; fanout 0 keeps none.
  std::vector<uint64_t>& labor_at = scratch.labor_at;
  if (labor != nullptr && fanout > 0) {
    labor_at.resize(num_dst);
    uint64_t room = 0;
    for (uint64_t i = 0; i < num_dst; ++i) {
      const uint64_t degree = graph.InDegree(dst[i]);
      labor_at[i] = degree > static_cast<uint64_t>(fanout) ? room : UINT64_MAX;
      if (degree > static_cast<uint64_t>(fanout)) room += degree;
    }
    scratch.labor_kept.resize(room);
    scratch.labor_weight.resize(room);
  } else {
    labor = nullptr;  // every destination keeps all its in-edges, or none
  }
  const bool importance = labor != nullptr && labor_.importance != 0;
  if (importance) {
    WeighCandidates(graph, dst, static_cast<uint32_t>(fanout), layer, *labor, scratch);
  }
  // Every pass here is by destination (or by a destination's edges), so the thread split
  // changes nothing. First the in-edges of each destination and how many it keeps.
  ParallelFor(workers, num_dst, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      const uint64_t degree = graph.InDegree(dst[i]);
      uint64_t kept =
          fanout < 0 ? degree : std::min<uint64_t>(degree, static_cast<uint64_t>(fanout));
      if (labor != nullptr && labor_at[i] != UINT64_MAX) {
        kept = 0;
        uint32_t* out = scratch.labor_kept.data() + labor_at[i];
        float* weight = scratch.labor_weight.data() + labor_at[i];
        if (importance) {
          const uint32_t* candidate = scratch.candidate_of.data() + scratch.edge_at[i];
          const double scale = scratch.scale[i];
          for (uint64_t k = 0; k < degree; ++k) {
            const uint32_t t = candidate[k];
            const double p = std::min(1.0, scale * scratch.importance[t]);
            if (scratch.variate[t] < p) {
              weight[kept] = static_cast<float>(1.0 / p);
              out[kept++] = static_cast<uint32_t>(k);
            }
          }
        } else {
          const double p = static_cast<double>(fanout) / degree;
          const double keep = labor->KeyThreshold(p);
          const uint64_t first = graph.EdgeBegin(dst[i]);
          for (uint64_t k = 0; k < degree; ++k) {
            if (labor->Key(graph.Source(first + k)) < keep) {
              weight[kept] = static_cast<float>(1.0 / p);
              out[kept++] = static_cast<uint32_t>(k);
            }
          }
        }
      }
      if (kept >= UINT32_MAX) {
        throw Error::Input(fmt::format("node {} has {} in-neighbours, more than a block can hold",
                                       dst[i], degree));
      }
      ranges[i] = EdgeRange{graph.EdgeBegin(dst[i]), degree};
      indptr[i + 1] = static_cast<uint32_t>(kept);
    }
  });
  uint64_t total = 0;
  for (uint64_t i = 1; i <= num_dst; ++i) {
    total += indptr[i];
    if (total + num_dst >= UINT32_MAX) {
      throw Error::Input(fmt::format(
          "a sampled layer of {} destinations has more edges than 32-bit local ids can number; "
          "lower the batch size or the fanouts",
          num_dst));
    }
    indptr[i] = static_cast<uint32_t>(total);
  }
  picked.resize(total);
  block.edge_weights.assign(labor != nullptr ? total : 0, 1.0f);
  const bool resident = graph.indices_resident();

  ParallelFor(workers, num_dst, [&](uint64_t begin, uint64_t end) {
    std::vector<uint64_t> bitmap;
    for (uint64_t i = begin; i < end; ++i) {
      const auto [first_edge, degree] = ranges[i];
      const uint64_t kept = indptr[i + 1] - indptr[i];
      uint64_t* out = picked.data() + indptr[i];
      if (labor != nullptr && labor_at[i] != UINT64_MAX) {
        // The first pass's survivors, in edge order: sources stay in ascending id.
        const uint32_t* survivors = scratch.labor_kept.data() + labor_at[i];
        for (uint64_t k = 0; k < kept; ++k) out[k] = first_edge + survivors[k];
        std::copy_n(scratch.labor_weight.data() + labor_at[i], kept,
                    block.edge_weights.data() + indptr[i]);
        continue;
      }
      if (kept == degree) {
        for (uint64_t k = 0; k < degree; ++k) out[k] = first_edge + k;
        continue;
      }
      // The destination node's own stream: the same picks whichever thread draws them and
      // wherever the node sits in the batch (so evaluation may split a batch freely).
      Rng rng(MixSeed(layer_seed, dst[i]));
      ChooseDistinct(rng, degree, kept, out, bitmap);
      for (uint64_t k = 0; k < kept; ++k) out[k] += first_edge;
    }
    // Edge ids to source ids in a separate tight loop: its loads are independent cache misses
    // that the CPU overlaps, where interleaved with the random draws they would not be.
    if (!resident) return;
    for (uint64_t k = indptr[begin]; k < indptr[end]; ++k) picked[k] = graph.Source(picked[k]);
  });
  // On disk, the whole layer's entries go to the reader at once: sorted and coalesced, the
  // picks of one node usually share a read.
  if (!resident) graph.ResolveSources(picked);
}

void NeighborSampler::WeighCandidates(const CscGraph& graph, std::span<const uint64_t> dst,
                                      uint32_t fanout, size_t layer, const LaborVariates& labor,
                                      Scratch& scratch) const {
  const uint64_t num_dst = dst.size();
  std::vector<uint32_t>& edge_at = scratch.edge_at;
  edge_at.resize(num_dst + 1);
  uint64_t edges = 0;
  for (uint64_t i = 0; i < num_dst; ++i) {
    edge_at[i] = static_cast<uint32_t>(edges);
    edges += graph.InDegree(dst[i]);
    if (edges >= UINT32_MAX) {
      throw Error::Input(fmt::format(
          "LABOR-* weighs {}+ in-edges of a layer, more than 32-bit offsets can number; lower "
          "the batch size or the fanouts",
          edges));
    }
  }
  edge_at[num_dst] = static_cast<uint32_t>(edges);
  // Each edge's source, then the candidates numbered by first appearance in edge order, as a
  // block's local ids are (the same numbers for any thread count).
  std::vector<uint64_t>& sources = scratch.candidate_sources;
  sources.resize(edges);
  ParallelFor(num_dst < kMinParallelDestinations ? 1u : threads_, num_dst,
              [&](uint64_t begin, uint64_t end) {
                for (uint64_t i = begin; i < end; ++i) {
                  const uint64_t first = graph.EdgeBegin(dst[i]);
                  for (uint32_t e = edge_at[i]; e < edge_at[i + 1]; ++e) {
                    sources[e] = graph.Source(first + (e - edge_at[i]));
                  }
                }
              });
  std::vector<uint64_t>& ids = scratch.candidate_ids;
  AssignLocalIds({}, sources, threads_, scratch.candidate_numbers[layer], ids,
                 scratch.candidate_of);
  scratch.importance.resize(ids.size());
  scratch.scale.resize(num_dst);
  LaborImportance(edge_at, scratch.candidate_of, fanout, labor_.importance, scratch.importance,
                  scratch.scale, scratch.importance_scratch, threads_);
  scratch.variate.resize(ids.size());
  ParallelFor(ids.size() < kMinParallelDestinations ? 1u : threads_, ids.size(),
              [&](uint64_t begin, uint64_t end) {
                for (uint64_t c = begin; c < end; ++c) scratch.variate[c] = labor(ids[c]);
              });
}

}  // namespace strata
