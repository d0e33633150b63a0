#include "minibatch/batch_pipeline.h"

#include <chrono>
#include <deque>

#include "common/clock.h"
#include "common/interrupt.h"
#include "minibatch/batch_bound.h"

namespace strata {
namespace {

// A batch in the fetch thread's window: sampled and pinned, perhaps already submitted.
struct WindowEntry {
  ReadyBatch ready;
  bool submitted = false;
  FeatureStore::Ticket ticket = 0;
  std::vector<uint64_t> read_ids;  // a partial batch's: the input nodes not left out

  // The ids whose rows the batch pins and reads.
  const std::vector<uint64_t>& ids() const {
    return ready.partial ? read_ids : ready.batch.input_nodes();
  }
};

// Takes a sampled batch into a window entry, noting which of its rows to read when some are
// left out.
WindowEntry EntryFor(ReadyBatch sampled, const NodeSet* left_out) {
  WindowEntry entry;
  entry.ready = std::move(sampled);
  if (left_out != nullptr) {
    entry.ready.partial = true;
    const std::vector<uint64_t>& input = entry.ready.batch.input_nodes();
    for (size_t i = 0; i < input.size(); ++i) {
      if (left_out->Contains(input[i])) continue;
      entry.ready.gathered.push_back(static_cast<uint32_t>(i));
      entry.read_ids.push_back(input[i]);
    }
  }
  return entry;
}

// Finishes what the window still holds when the pipeline stops early or fails: submitted
// gathers are waited for, so that no read lands in a freed matrix, and every batch's pins are
// released. Errors are swallowed: the first one has been recorded already, and a store that
// failed has abandoned its jobs.
void ReleaseWindow(FeatureStore& store, std::deque<WindowEntry>& window) noexcept {
  for (WindowEntry& entry : window) {
    try {
      if (entry.submitted) store.Wait(entry.ticket);
    } catch (...) {
    }
    try {
      store.Unpin(entry.ids());
    } catch (...) {
    }
  }
  window.clear();
}

}  // namespace

BatchPipeline::BatchPipeline(const NeighborSampler& sampler, FeatureStore& store,
                             const PipelineOptions& options, MemoryBudget& budget)
    : sampler_(sampler),
      store_(store),
      options_(options),
      budget_(budget),
      sampled_(options.max_run_ahead),
      ready_(1),
      store_stats_(store.stats()) {
  if (options.batch_reserve != nullptr) {
    memory_.emplace(budget, *options.batch_reserve, options.first_batch);
  }
  sampler_thread_ = std::thread([this] { SampleLoop(); });
  fetch_thread_ = std::thread([this] { FetchLoop(); });
}

BatchPipeline::~BatchPipeline() {
  stopping_ = true;
  sampled_.Close();
  ready_.Close();
  sampler_thread_.join();
  fetch_thread_.join();
}

std::optional<ReadyBatch> BatchPipeline::Next(const std::function<void()>& poll) {
  // An mmap store thrashing the page cache, say, can hold a batch back for seconds.
  std::optional<ReadyBatch> ready = ready_.PopPolling(std::chrono::milliseconds(100), poll);
  if (ready && memory_) memory_->HandedOut();
  return ready;
}

FeatureStoreStats BatchPipeline::store_stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return store_stats_;
}

PipelineStats BatchPipeline::pipeline_stats() const {
  PipelineStats stats;
  stats.sample_s = sample_ns_ * 1e-9;
  stats.fetch_s = fetch_ns_ * 1e-9;
  stats.fetch_wait_s = fetch_wait_ns_ * 1e-9;
  stats.max_batches_in_flight = max_in_flight_;
  stats.reads_in_flight_target = target_;
  stats.device_iops = peak_iops_;
  stats.read_latency_us = latency_us_;
  return stats;
}

void BatchPipeline::SampleLoop() {
  try {
    const uint64_t batches = sampler_.batches_per_epoch();
    for (uint64_t b = options_.first_batch; b < batches && !stopping_; ++b) {
      uint64_t start = MonotonicNs();
      ReadyBatch sampled;
      sampled.batch = sampler_.Sample(options_.epoch, b);
      sample_ns_ += MonotonicNs() - start;
      if (memory_) {
        const uint64_t bytes = BlockBytes(sampled.batch);
        MemoryBudget* charged = memory_->Charge(b, bytes, stopping_);
        if (charged == nullptr) return;
        sampled.blocks_charge = HeldCharge(*charged, bytes);
      }
      if (!sampled_.Push(std::move(sampled))) return;
    }
    sampled_.Close();
  } catch (...) {
    sampled_.Close(std::current_exception());
  }
}

void BatchPipeline::FetchLoop() {
  std::deque<WindowEntry> window;
  const uint64_t dim = store_.dim();
  StorageAccessAccumulator accumulator(options_.max_reads_in_flight);
  try {
    bool input_done = false;
    while (!stopping_) {
      // Take every sampled batch that is ready (waiting only when there is nothing else to
      // do) and pin its rows: the run-ahead batches are the cache's window.
      while (!input_done && window.size() < options_.max_run_ahead) {
        // closed() is read before TryPop: closed and then empty means drained.
        const bool was_closed = sampled_.closed();
        std::optional<ReadyBatch> batch = window.empty() ? sampled_.Pop() : sampled_.TryPop();
        if (!batch) {
          input_done = window.empty() || was_closed;
          break;
        }
        uint64_t start = MonotonicNs();
        WindowEntry entry = EntryFor(std::move(*batch), options_.left_out);
        store_.Pin(entry.ids());
        window.push_back(std::move(entry));
        fetch_ns_ += MonotonicNs() - start;
      }
      if (window.empty()) break;
      // Submit gathers in order. The oldest batch always goes (into the reserve, when there is
      // one and it is one of the reserve's); the one after it goes as soon as there is room
      // for its matrix, so its reads queue behind the oldest's and the device never idles
      // between batches; later ones go while fewer reads are queued than the accumulator's
      // target.
      uint64_t start = MonotonicNs();
      uint64_t in_flight = 0;
      for (size_t i = 0; i < window.size(); ++i) {
        WindowEntry& entry = window[i];
        if (entry.submitted) {
          ++in_flight;
          continue;
        }
        const uint64_t rows = entry.ids().size();
        // The window's oldest is always one of the reserve's (the ready queue holds one batch
        // at most), even before Next() has counted the batch the consumer just took.
        const bool reserved = memory_ && (i == 0 || memory_->Reserved(entry.ready.batch.index));
        MemoryBudget& budget = reserved ? memory_->reserve() : budget_;
        const bool fits = reserved || RowBuffer::Fits(budget, options_.output_arena, rows * dim);
        const bool device_has_room = store_.reads_in_flight() < accumulator.target();
        if (i > 0 && !(fits && (i == 1 || device_has_room))) break;
        std::optional<RowBuffer> features =
            RowBuffer::Allocate(budget, options_.output_arena, rows * dim, stopping_);
        if (!features) break;  // stopping while the consumer held the arena
        entry.ready.rows = rows;
        entry.ready.features = std::move(*features);
        entry.ticket = store_.Submit(entry.ids(), {entry.ready.features.data(), rows * dim});
        entry.submitted = true;
        ++in_flight;
      }
      max_in_flight_ = std::max<uint64_t>(max_in_flight_, in_flight);
      fetch_ns_ += MonotonicNs() - start;
      if (!window.front().submitted) break;  // stopped while waiting for room in the arena
      // Finish the oldest gather and hand it on. It stays in the window until it is unpinned,
      // so that an error here still releases its pins; Wait consumes the ticket even when it
      // throws.
      start = MonotonicNs();
      window.front().submitted = false;
      store_.Wait(window.front().ticket);
      store_.Unpin(window.front().ids());
      ReadyBatch ready = std::move(window.front().ready);
      window.pop_front();
      fetch_wait_ns_ += MonotonicNs() - start;
      const FeatureStoreStats stats = store_.stats();
      {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        store_stats_ = stats;
      }
      accumulator.Observe(MonotonicNs(), stats.reads_completed, stats.read_latency_ns);
      target_ = accumulator.target();
      peak_iops_ = accumulator.peak_iops();
      latency_us_ = accumulator.latency_us();
      if (!ready_.Push(std::move(ready))) break;
    }
    ReleaseWindow(store_, window);
    ready_.Close();
  } catch (...) {
    ReleaseWindow(store_, window);
    ready_.Close(std::current_exception());
  }
}

}  // namespace strata
