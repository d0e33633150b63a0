#include "train/macro_batch_source.h"

#include <atomic>
#include <chrono>
#include <numeric>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "common/interrupt.h"
#include "common/random.h"
#include "features/row_codec.h"
#include "strata/error.h"
#include "strata/neighbor_sampler.h"
#include "train/bounded_queue.h"

namespace strata {
namespace {

constexpr uint64_t kPartitionOrderStream = 0x6d61637200000000ull;  // "macr"

// The macro-batches of an epoch: the partitions shuffled by (seed, epoch), in groups.
std::vector<std::vector<uint32_t>> PlanEpoch(uint32_t parts, uint32_t macro_batch, uint64_t seed,
                                             uint64_t epoch) {
  std::vector<uint32_t> order(parts);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(MixSeed(seed ^ kPartitionOrderStream, epoch));
  for (uint32_t i = parts; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  std::vector<std::vector<uint32_t>> plan;
  for (uint32_t first = 0; first < parts; first += macro_batch) {
    plan.emplace_back(order.begin() + first,
                      order.begin() + std::min<uint32_t>(parts, first + macro_batch));
  }
  return plan;
}

class MacroBatchStream final : public BatchStream {
 public:
  MacroBatchStream(MacroBatchLoader& loader, const TrainOptions& o, FeatureDtype dtype,
                   uint64_t dim, uint64_t epoch, MemoryBudget& budget)
      : loader_(loader),
        options_(o),
        dtype_(dtype),
        dim_(dim),
        epoch_(epoch),
        budget_(budget),
        plan_(PlanEpoch(loader.parts(), loader.macro_batch(), o.seed, epoch)),
        free_(2),
        loaded_(1),
        ready_(std::max<uint32_t>(o.max_run_ahead, 1)) {
    free_.Push(0);
    free_.Push(1);
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
  }

  std::optional<ReadyBatch> Next() override {
    while (true) {
      bool timed_out = false;
      std::optional<ReadyBatch> ready = ready_.PopFor(std::chrono::milliseconds(100), timed_out);
      if (!timed_out) return ready;
      ThrowIfInterrupted();
    }
  }

  StageBusy busy() const override {
    StageBusy busy;
    busy.sample_s = sample_ns_ * 1e-9;
    busy.macro_batches = macro_batches_;
    busy.macro_passes = macro_passes_;
    busy.load_bytes = load_bytes_;
    busy.load_s = load_ns_ * 1e-9;
    busy.stall_s = stall_ns_ * 1e-9;
    return busy;
  }
  FeatureStoreStats store_stats() const override { return {}; }

 private:
  void LoadLoop() {
    try {
      for (const std::vector<uint32_t>& partitions : plan_) {
        std::optional<int> buffer = free_.Pop();
        if (!buffer || stopping_) return;
        const uint64_t start = MonotonicNs();
        std::unique_ptr<MacroBatch> batch = loader_.Load(partitions, *buffer);
        load_ns_ += MonotonicNs() - start;
        load_bytes_ += batch->bytes_read;
        if (!loaded_.Push(std::move(batch))) return;
      }
      loaded_.Close();
    } catch (...) {
      loaded_.Close(std::current_exception());
    }
  }

  void ProduceLoop() {
    try {
      uint64_t index = 0;
      for (uint64_t m = 0;; ++m) {
        const uint64_t wait_start = MonotonicNs();
        std::optional<std::unique_ptr<MacroBatch>> batch = loaded_.Pop();
        stall_ns_ += MonotonicNs() - wait_start;
        if (!batch) break;
        const int buffer = (*batch)->buffer;
        if (!Produce(**batch, m, index)) return;
        batch->reset();  // releases the graph's charge before the buffer is reused
        ++macro_batches_;
        if (!free_.Push(buffer)) return;
      }
      ready_.Close();
    } catch (...) {
      ready_.Close(std::current_exception());
    }
  }

  // Queues the mini-batches of every pass over `batch`; false when the stream was stopped.
  bool Produce(const MacroBatch& batch, uint64_t m, uint64_t& index) {
    if (batch.train_local.empty()) return true;
    const SamplingOptions& s = options_.sampling;
    const NeighborSampler sampler(*batch.graph, batch.train_local, s.fanouts, s.batch_size,
                                  options_.seed, budget_, options_.threads);
    const uint32_t passes = std::max<uint32_t>(options_.multistage.reuse, 1);
    for (uint32_t r = 0; r < passes; ++r) {
      // The sampler's "epoch" names the stream: (epoch, macro-batch, pass).
      const uint64_t stream = (epoch_ << 24) | (m << 3) | r;
      for (uint64_t b = 0; b < sampler.batches_per_epoch(); ++b) {
        if (stopping_) return false;
        const uint64_t start = MonotonicNs();
        ReadyBatch ready;
        ready.batch = sampler.Sample(stream, b);
        const std::vector<uint64_t>& inputs = ready.batch.input_nodes();
        ready.rows = inputs.size();
        ready.features = ChargedArray<float>(budget_, inputs.size() * dim_, "batch input features");
        for (size_t i = 0; i < inputs.size(); ++i) {
          DecodeRow(batch.row_of[inputs[i]], dtype_, {ready.features.data() + i * dim_, dim_});
        }
        for (Block& block : ready.batch.blocks) {
          for (uint64_t& id : block.src_nodes) id = batch.global_of[id];
        }
        ready.batch.epoch = epoch_;
        ready.batch.index = index++;
        sample_ns_ += MonotonicNs() - start;
        if (!ready_.Push(std::move(ready))) return false;
      }
      ++macro_passes_;
    }
    return true;
  }

  MacroBatchLoader& loader_;
  const TrainOptions& options_;
  FeatureDtype dtype_;
  uint64_t dim_;
  uint64_t epoch_;
  MemoryBudget& budget_;
  std::vector<std::vector<uint32_t>> plan_;
  BoundedQueue<int> free_;
  BoundedQueue<std::unique_ptr<MacroBatch>> loaded_;
  BoundedQueue<ReadyBatch> ready_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sample_ns_{0}, load_ns_{0}, stall_ns_{0}, load_bytes_{0};
  std::atomic<uint64_t> macro_batches_{0}, macro_passes_{0};
  std::thread loader_thread_, producer_thread_;
};

std::vector<bool> TrainMask(uint64_t nodes, const std::vector<uint64_t>& train_ids) {
  std::vector<bool> mask(nodes, false);
  for (uint64_t v : train_ids) mask[v] = true;
  return mask;
}

}  // namespace

MacroBatchSource::MacroBatchSource(const Dataset& dataset, const CscGraph& graph,
                                   const std::vector<uint64_t>& train_ids,
                                   const TrainOptions& options, MemoryBudget& budget)
    : options_(options),
      budget_(budget),
      train_count_(train_ids.size()),
      dtype_(dataset.meta().feature_dtype),
      feature_dim_(dataset.meta().feature_dim),
      loader_(dataset, graph, TrainMask(graph.num_nodes(), train_ids),
              options.multistage.macro_batch, options.io_depth, budget) {}

MacroBatchSource::~MacroBatchSource() = default;

uint64_t MacroBatchSource::batches_per_epoch() const {
  const uint64_t batch = std::max<uint64_t>(options_.sampling.batch_size, 1);
  return (train_count_ + batch - 1) / batch * std::max<uint32_t>(options_.multistage.reuse, 1);
}

std::unique_ptr<BatchStream> MacroBatchSource::StartEpoch(uint64_t epoch) {
  return std::make_unique<MacroBatchStream>(loader_, options_, dtype_, feature_dim_, epoch,
                                            budget_);
}

}  // namespace strata
