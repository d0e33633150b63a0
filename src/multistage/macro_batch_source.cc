#include "multistage/macro_batch_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <iterator>
#include <numeric>
#include <optional>
#include <thread>

#include "common/bounded_queue.h"
#include "common/clock.h"
#include "common/enum_names.h"
#include "common/float16.h"
#include "common/interrupt.h"
#include "features/row_codec.h"
#include "minibatch/batch_bound.h"
#include "minibatch/batch_memory.h"
#include "multistage/large_batch_loader.h"
#include "multistage/partition_loader.h"
#include "storage/scratch_file.h"
#include "strata/error.h"
#include "strata/neighbor_sampler.h"
#include "strata/row_buffer.h"

namespace strata {
namespace {

constexpr EnumNames<MultistageMethod, 3> kMultistageMethodNames(
    "--multistage", {{{MultistageMethod::kPartition, "partition"},
                      {MultistageMethod::kLargeBatch, "lbs"},
                      {MultistageMethod::kPbs, "pbs"}}});

// The macro-batches one rank loads in an epoch, in order, and the batches it hands out.
struct RankShare {
  std::vector<uint64_t> macro_batches;
  uint64_t batches = 0;
};

// Rank r of w takes macro-batches r, r + w, ...; every rank hands out as many batches as the
// rank with the fewest has (fixed passes: each macro-batch's count is known before it loads),
// and loads no macro-batch beyond them.
RankShare ShareOf(const MacroBatchLoader& loader, const TrainOptions& o, uint64_t epoch) {
  const uint64_t planned = loader.macro_batches(epoch);
  const uint32_t world = std::max<uint32_t>(o.multistage.world_size, 1);
  RankShare share;
  if (world == 1) {
    for (uint64_t m = 0; m < planned; ++m) share.macro_batches.push_back(m);
    share.batches = UINT64_MAX;
    return share;
  }
  const uint64_t batch = std::max<uint64_t>(o.sampling.batch_size, 1);
  const uint64_t passes = std::max<uint32_t>(o.multistage.reuse, 1);
  const uint64_t pieces = o.sampling.batch_pieces;
  std::vector<uint64_t> batches_in = loader.seeds_per_macro_batch(epoch);
  for (uint64_t& count : batches_in) count = (count + batch - 1) / batch * pieces * passes;
  std::vector<uint64_t> per_rank(world, 0);
  for (uint64_t m = 0; m < planned; ++m) per_rank[m % world] += batches_in[m];
  share.batches = *std::min_element(per_rank.begin(), per_rank.end());
  if (share.batches == 0) {
    throw Error::Input(
        fmt::format("epoch {} has {} macro-batches with seeds for {} ranks; "
                    "every rank needs one: lower the macro-batch size",
                    epoch, planned, world));
  }
  uint64_t taken = 0;
  for (uint64_t m = o.multistage.rank; m < planned && taken < share.batches; m += world) {
    share.macro_batches.push_back(m);
    taken += batches_in[m];
  }
  return share;
}

// A PBS batch's exchange with its macro-batch's history: the fresh rows go to the macro-batch's
// write-back when the step commits them; the batch counts as done then, or when it is
// destroyed uncommitted.
class HaloBatchHistory final : public BatchHistory {
 public:
  HaloBatchHistory(std::shared_ptr<HistoryWriteBack> write_back, uint64_t width, uint32_t step)
      : write_back_(std::move(write_back)), width_(width), step_(step) {
    write_back_->AddBatch();
  }
  ~HaloBatchHistory() override {
    if (!done_) write_back_->BatchDone();
  }

  // The batch is done once committed, even while its consumer still holds it (a Python loop
  // variable does, while it asks for the next batch).
  void Commit() override {
    if (done_) return;
    for (size_t l = 0; l < layers.size(); ++l) {
      const HiddenHistory<float>& h = layers[l];
      for (size_t i = 0; i < h.fresh.size(); ++i) {
        write_back_->Store(fresh_local[l][i], l * width_, h.fresh_rows.data() + i * width_, width_,
                           step_);
      }
    }
    done_ = true;
    write_back_->BatchDone();
  }

  std::vector<std::vector<uint64_t>> fresh_local;  // per layer, the local id of each fresh row

 private:
  std::shared_ptr<HistoryWriteBack> write_back_;
  uint64_t width_;
  uint32_t step_;
  bool done_ = false;
};

class MacroBatchStream final : public BatchStream {
 public:
  MacroBatchStream(MacroBatchLoader& loader, const TrainOptions& o, uint64_t dim, uint64_t epoch,
                   MemoryBudget& budget, HostArena* output_arena, MemoryBudget* batch_reserve,
                   const NodeSet* left_out, uint64_t& steps)
      : loader_(loader),
        options_(o),
        dim_(dim),
        epoch_(epoch),
        budget_(budget),
        output_arena_(output_arena),
        left_out_(left_out),
        steps_(steps),
        share_(ShareOf(loader, o, epoch)),
        free_(2),
        loaded_(1),
        ready_(std::max<uint32_t>(o.max_run_ahead, 1)) {
    free_.Push(0);
    free_.Push(1);
    // The Python loader's batches go to its arena and it may hold several: no reserve there.
    if (batch_reserve != nullptr && output_arena == nullptr) {
      memory_.emplace(budget, *batch_reserve, 0);
    }
    loader_.set_graph_built([this](MacroBatch& batch) {
      if (batch.halo || AheadOfTime()) Presample(batch, loading_);
    });
    loader_thread_ = std::thread([this] { LoadLoop(); });
    producer_thread_ = std::thread([this] { ProduceLoop(); });
  }

  ~MacroBatchStream() override {
    stopping_ = true;
    free_.Close();
    loaded_.Close();
    ready_.Close();
    loader_thread_.join();
    producer_thread_.join();
    loader_.set_graph_built({});
  }

  using BatchStream::Next;
  std::optional<ReadyBatch> Next(const std::function<void()>& poll) override {
    std::optional<ReadyBatch> ready = ready_.PopPolling(std::chrono::milliseconds(100), poll);
    if (ready && memory_) memory_->HandedOut();
    return ready;
  }

  PipelineStats pipeline_stats() const override {
    PipelineStats stats;
    stats.sample_s = sample_ns_ * 1e-9;
    MacroBatchStats& macro = stats.multistage.emplace();
    macro.planned = share_.macro_batches.size();
    macro.macro_batches = macro_batches_;
    macro.passes = macro_passes_;
    macro.load_bytes = load_bytes_;
    macro.load_busy_s = load_ns_ * 1e-9;
    macro.load_wait_s = load_wait_ns_ * 1e-9;
    macro.aot_bytes_saved = aot_bytes_saved_;
    macro.halo_nodes = halo_nodes_;
    macro.halo_bytes = halo_bytes_;
    macro.history_bytes_read = history_bytes_read_;
    macro.history_bytes_written = history_bytes_written_;
    macro.history_age_steps =
        history_aged_ ? static_cast<double>(history_age_sum_) / static_cast<double>(history_aged_)
                      : 0.0;
    macro.history_never_written = history_never_written_;
    return stats;
  }
  FeatureStoreStats store_stats() const override { return {}; }

 private:
  void LoadLoop() {
    try {
      for (uint64_t m : share_.macro_batches) {
        std::optional<int> buffer = free_.Pop();
        if (!buffer || stopping_) return;
        // The macro-batch that had this buffer, two before, is written back before this one
        // reads the table: so macro-batch m sees every step of those up to m - 2, and none of
        // m - 1's, whatever the timing.
        if (!WriteBack(*buffer)) return;
        const uint64_t start = MonotonicNs();
        loading_ = m;
        std::unique_ptr<MacroBatch> batch = loader_.Load(epoch_, m, *buffer);
        load_ns_ += MonotonicNs() - start;
        load_bytes_ += batch->bytes_read;
        aot_bytes_saved_ += batch->aot_bytes_saved;
        if (batch->halo) {
          const Halo& halo = *batch->halo;
          halo_bytes_ += halo.feature_bytes_read;
          history_bytes_read_ += halo.history_bytes_read;
          pending_[*buffer] = halo.write_back;
        }
        if (!loaded_.Push(std::move(batch))) return;
      }
      // The epoch ends with the table holding all of it.
      for (int buffer : {0, 1}) {
        if (!WriteBack(buffer)) return;
      }
      loaded_.Close();
    } catch (...) {
      loaded_.Close(std::current_exception());
    }
  }

  // Samples every pass of a macro-batch ahead of time, when its graph is built (on the loader
  // thread, from Load), and names the rows those mini-batches use, so that the loader reads
  // no other: the partitions' rows (ahead_of_time) and the halo's.
  void Presample(MacroBatch& batch, uint64_t m) {
    const uint64_t begin = batch.halo ? batch.halo->begin : batch.global_of.size();
    std::vector<uint64_t> inner, input, hidden;  // inner: not the halo's; input and hidden: its
    if (!batch.train_local.empty()) {
      const std::unique_ptr<NeighborSampler> sampler = SamplerOf(batch);
      for (uint32_t r = 0; r < Passes(); ++r) {
        for (uint64_t b = 0; b < sampler->batches_per_epoch(); ++b) {
          SampledBatch& sample = batch.presampled.emplace_back(sampler->Sample(Stream(m, r), b));
          for (size_t l = 0; l < sample.blocks.size(); ++l) {
            for (uint64_t local : sample.blocks[l].src_nodes) {
              if (local >= begin) {
                (l == 0 ? input : hidden).push_back(local);
              } else if (l == 0) {
                inner.push_back(local);
              }
            }
          }
        }
      }
    }
    for (std::vector<uint64_t>* locals : {&inner, &input, &hidden}) {
      std::sort(locals->begin(), locals->end());
      locals->erase(std::unique(locals->begin(), locals->end()), locals->end());
    }
    if (AheadOfTime()) batch.input_rows = std::move(inner);
    if (!batch.halo) return;
    std::vector<uint64_t> used;
    std::set_union(input.begin(), input.end(), hidden.begin(), hidden.end(),
                   std::back_inserter(used));
    halo_nodes_ += used.size();
    loader_.LoadHalo(batch, input, hidden);
  }

  std::unique_ptr<NeighborSampler> SamplerOf(const MacroBatch& batch) const {
    const SamplingOptions& s = options_.sampling;
    const std::vector<int>& fanouts =
        options_.multistage.fanouts.empty() ? s.fanouts : options_.multistage.fanouts;
    std::vector<const CscGraph*> graphs;
    for (const std::unique_ptr<CscGraph>& graph : batch.graphs) graphs.push_back(graph.get());
    auto sampler = std::make_unique<NeighborSampler>(
        std::move(graphs), batch.train_local, fanouts, s.batch_size, options_.seed, budget_,
        options_.threads, SeedOrder{.even_batches = true, .pieces = s.batch_pieces});
    sampler->set_labor(s.labor);
    return sampler;
  }
  bool AheadOfTime() const { return options_.multistage.ahead_of_time; }
  uint32_t Passes() const { return std::max<uint32_t>(options_.multistage.reuse, 1); }
  // The sampler's "epoch" names the stream: (epoch, macro-batch, pass).
  uint64_t Stream(uint64_t m, uint32_t r) const { return (epoch_ << 24) | (m << 3) | r; }

  // Writes back the macro-batch pending in `buffer` once its batches are trained; false when
  // the stream stopped first.
  bool WriteBack(int buffer) {
    std::shared_ptr<HistoryWriteBack>& pending = pending_[buffer];
    if (!pending) return true;
    if (!pending->WaitTrained(stopping_)) return false;
    const uint64_t start = MonotonicNs();
    history_bytes_written_ += loader_.WriteBack(*pending);
    load_ns_ += MonotonicNs() - start;
    pending.reset();
    return true;
  }

  void ProduceLoop() {
    try {
      uint64_t index = 0;
      for (uint64_t i = 0;; ++i) {
        const uint64_t wait_start = MonotonicNs();
        std::optional<std::unique_ptr<MacroBatch>> batch = loaded_.Pop();
        load_wait_ns_ += MonotonicNs() - wait_start;
        if (!batch) break;
        const int buffer = (*batch)->buffer;
        if (!Produce(**batch, i, index)) return;
        batch->reset();  // releases the graph's charge before the buffer is reused
        ++macro_batches_;
        if (!free_.Push(buffer)) return;
      }
      ready_.Close();
    } catch (...) {
      ready_.Close(std::current_exception());
    }
  }

  // Queues the mini-batches of every pass over `batch`, the `i`-th macro-batch of this rank's
  // share, up to the share's batches; false when the stream was stopped.
  bool Produce(MacroBatch& batch, uint64_t i, uint64_t& index) {
    // However the passes end, no more batches of it follow.
    struct Sealer {
      HistoryWriteBack* write_back;
      ~Sealer() {
        if (write_back) write_back->Seal();
      }
    } sealer{batch.halo ? batch.halo->write_back.get() : nullptr};
    const uint64_t m = share_.macro_batches[i];
    if (batch.train_local.empty()) return true;
    const std::unique_ptr<NeighborSampler> sampler = SamplerOf(batch);
    const uint64_t per_pass = sampler->batches_per_epoch();
    for (uint32_t r = 0; r < Passes(); ++r) {
      for (uint64_t b = 0; b < per_pass && index < share_.batches; ++b) {
        if (stopping_) return false;
        const uint64_t start = MonotonicNs();
        ReadyBatch ready;
        ready.batch = batch.presampled.empty() ? sampler->Sample(Stream(m, r), b)
                                               : std::move(batch.presampled[r * per_pass + b]);
        const std::vector<uint64_t>& inputs = ready.batch.input_nodes();  // local ids
        ready.partial = left_out_ != nullptr;
        for (size_t i = 0; ready.partial && i < inputs.size(); ++i) {
          if (!left_out_->Contains(batch.global_of[inputs[i]])) {
            ready.gathered.push_back(static_cast<uint32_t>(i));
          }
        }
        ready.rows = ready.partial ? ready.gathered.size() : inputs.size();
        if (memory_) {
          // The blocks and the features in one charge, where BatchMemory says.
          const uint64_t block_bytes = BlockBytes(ready.batch);
          MemoryBudget* charged =
              memory_->Charge(index, block_bytes + ready.rows * dim_ * sizeof(float), stopping_);
          if (charged == nullptr) return false;
          ready.blocks_charge = HeldCharge(*charged, block_bytes);
          ready.features = RowBuffer(ChargedArray<float>::Adopt(*charged, ready.rows * dim_));
        } else {
          std::optional<RowBuffer> features =
              RowBuffer::Allocate(budget_, output_arena_, ready.rows * dim_, stopping_);
          if (!features) return false;
          ready.features = std::move(*features);
        }
        for (size_t r = 0; r < ready.rows; ++r) {
          const uint64_t local = inputs[ready.partial ? ready.gathered[r] : r];
          float* row = ready.features.data() + r * dim_;
          if (batch.halo && local >= batch.halo->begin) {
            const uint32_t slot = batch.halo->feature_slot[local - batch.halo->begin];
            std::copy_n(batch.halo->features.data() + slot * dim_, dim_, row);
          } else {
            DecodeRow(batch.row_of[local], batch.row_dtype, {row, dim_});
          }
        }
        if (batch.halo) ready.history = HistoryOf(batch, ready.batch);
        for (Block& block : ready.batch.blocks) {
          for (uint64_t& id : block.src_nodes) id = batch.global_of[id];
        }
        ready.macro_batch = m;
        ready.batch.epoch = epoch_;
        ready.batch.index = index++;
        ++steps_;
        sample_ns_ += MonotonicNs() - start;
        if (!ready_.Push(std::move(ready))) return false;
      }
      ++macro_passes_;
      if (options_.multistage.adaptive_reuse && !NextStillLoading(i)) break;
    }
    return true;
  }

  // What a batch of a macro-batch with a halo exchanges with the history (the blocks still in
  // local ids): for each hidden layer's input, the halo nodes' rows from the table, and the
  // partitions' nodes' rows to write back.
  std::unique_ptr<BatchHistory> HistoryOf(const MacroBatch& macro, const SampledBatch& batch) {
    const Halo& halo = *macro.halo;
    const uint64_t hidden = batch.blocks.size() - 1;
    const uint64_t width = halo.write_back->row_values() / hidden;
    const uint64_t inner = halo.write_back->inner_nodes();
    const auto step = static_cast<uint32_t>(steps_);
    auto history = std::make_unique<HaloBatchHistory>(halo.write_back, width, step);
    history->layers.resize(hidden);
    history->width = width;
    history->fresh_local.resize(hidden);
    for (uint64_t l = 0; l < hidden; ++l) {
      const std::vector<uint64_t>& nodes = batch.blocks[l + 1].src_nodes;
      HiddenHistory<float>& h = history->layers[l];
      for (size_t i = 0; i < nodes.size(); ++i) {
        const uint64_t local = nodes[i];
        if (local >= halo.begin) {
          const uint32_t k = halo.history_slot[local - halo.begin];
          h.stale.push_back(static_cast<uint32_t>(i));
          h.stale_rows.resize(h.stale_rows.size() + width);
          HalvesToFloats(
              {halo.history.data() + k * halo.write_back->row_values() + l * width, width},
              h.stale_rows.data() + h.stale_rows.size() - width);
          if (halo.stamps[k] == HistoryTable::kNeverWritten) {
            ++history_never_written_;
          } else {
            history_age_sum_ += step - halo.stamps[k];
            ++history_aged_;
          }
        } else if (local < inner) {
          h.fresh.push_back(static_cast<uint32_t>(i));
          history->fresh_local[l].push_back(local);
        }
      }
    }
    return history;
  }

  // Whether the loader is still reading the macro-batch after the share's `i`-th.
  bool NextStillLoading(uint64_t i) const {
    return i + 1 < share_.macro_batches.size() && loaded_.size() == 0;
  }

  MacroBatchLoader& loader_;
  const TrainOptions& options_;
  uint64_t dim_;
  uint64_t epoch_;
  MemoryBudget& budget_;
  HostArena* output_arena_;
  std::optional<BatchMemory> memory_;  // with the memory plan's batch reserve
  const NodeSet* left_out_;
  uint64_t& steps_;  // steps handed out by the source so far: the history's clock
  RankShare share_;
  BoundedQueue<int> free_;
  BoundedQueue<std::unique_ptr<MacroBatch>> loaded_;
  BoundedQueue<ReadyBatch> ready_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sample_ns_{0}, load_ns_{0}, load_wait_ns_{0}, load_bytes_{0};
  std::atomic<uint64_t> macro_batches_{0}, macro_passes_{0};
  uint64_t loading_ = 0;                          // the macro-batch the loader thread is loading
  std::shared_ptr<HistoryWriteBack> pending_[2];  // by buffer: not yet written back
  std::atomic<uint64_t> aot_bytes_saved_{0}, halo_nodes_{0}, halo_bytes_{0}, history_bytes_read_{0};
  std::atomic<uint64_t> history_bytes_written_{0};
  std::atomic<uint64_t> history_age_sum_{0}, history_aged_{0}, history_never_written_{0};
  std::thread loader_thread_, producer_thread_;
};

std::vector<bool> TrainMask(uint64_t nodes, const std::vector<uint64_t>& train_ids) {
  std::vector<bool> mask(nodes, false);
  for (uint64_t v : train_ids) mask[v] = true;
  return mask;
}

// Partition-based sampling's settings (none for the other methods), its scratch directory
// left to the loader's maker.
HaloOptions HaloOptionsOf(const TrainOptions& o) {
  HaloOptions halo;
  if (o.multistage.method == MultistageMethod::kPbs) {
    const ModelOptions& model = o.model;
    const uint64_t width =
        model.kind == ModelKind::kGat ? model.hidden * model.heads : model.hidden;
    halo.history_values = (model.layers - 1) * width;
    halo.store = LoaderStoreOptions(o);
  }
  return halo;
}

std::unique_ptr<MacroBatchLoader> MakeLoader(const Dataset& dataset, const CscGraph& graph,
                                             const std::vector<uint64_t>& train_ids,
                                             const TrainOptions& o, MemoryBudget& budget) {
  if (o.multistage.method == MultistageMethod::kLargeBatch) {
    return std::make_unique<LargeBatchLoader>(dataset, graph, train_ids, o, budget);
  }
  HaloOptions halo = HaloOptionsOf(o);
  if (halo.history_values > 0) halo.scratch_dir = ScratchDirectory(o.scratch_dir);
  return std::make_unique<PartitionLoader>(
      dataset, graph, TrainMask(graph.num_nodes(), train_ids), o.multistage.macro_batch, o.io_depth,
      o.seed, budget, o.multistage.world_size, o.multistage.ahead_of_time, std::move(halo));
}

}  // namespace

uint64_t MacroBatchLeastBytes(const Dataset& dataset, const CscGraph& graph,
                              const TrainOptions& options, const BatchBound& largest_batch) {
  if (options.multistage.method == MultistageMethod::kLargeBatch) {
    return LargeBatchLoader::LeastBytes(dataset, options, largest_batch);
  }
  return PartitionLoader::LeastBytes(dataset, graph, HaloOptionsOf(options));
}

MultistageMethod ParseMultistageMethod(std::string_view name) {
  return kMultistageMethodNames.Parse(name);
}
std::string_view MultistageMethodName(MultistageMethod method) {
  return kMultistageMethodNames.Name(method);
}

void ParseReuse(std::string_view text, MultistageOptions& o) {
  o.adaptive_reuse = text == "auto";
  if (o.adaptive_reuse) {
    o.reuse = 4;
    return;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), o.reuse);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw Error::Input(fmt::format("reuse '{}' is neither a number of passes nor auto", text));
  }
}

void ParseAheadOfTime(std::string_view text, MultistageOptions& o) {
  if (text.empty()) {
    o.ahead_of_time = o.method == MultistageMethod::kLargeBatch;
  } else if (text == "true" || text == "false") {
    o.ahead_of_time = text == "true";
  } else {
    throw Error::Input(fmt::format("--aot '{}': expected true or false", text));
  }
}

MacroBatchSource::MacroBatchSource(const Dataset& dataset, const CscGraph& graph,
                                   const std::vector<uint64_t>& train_ids,
                                   const TrainOptions& options, MemoryBudget& budget,
                                   HostArena* output_arena, MemoryBudget* batch_reserve)
    : options_(options),
      budget_(budget),
      output_arena_(output_arena),
      batch_reserve_(batch_reserve),
      train_count_(train_ids.size()),
      feature_dim_(dataset.meta().feature_dim),
      loader_(MakeLoader(dataset, graph, train_ids, options, budget)) {}

MacroBatchSource::~MacroBatchSource() = default;

uint64_t MacroBatchSource::batches_per_epoch() const {
  const uint64_t batch = std::max<uint64_t>(options_.sampling.batch_size, 1);
  const uint32_t passes =
      options_.multistage.adaptive_reuse ? 1 : std::max<uint32_t>(options_.multistage.reuse, 1);
  // Each rank about its share.
  return (train_count_ + batch - 1) / batch * options_.sampling.batch_pieces * passes /
         std::max<uint32_t>(options_.multistage.world_size, 1);
}

std::unique_ptr<BatchStream> MacroBatchSource::StartEpoch(uint64_t epoch) {
  return std::make_unique<MacroBatchStream>(*loader_, options_, feature_dim_, epoch, budget_,
                                            output_arena_, batch_reserve_, left_out_, steps_);
}

}  // namespace strata
