#include "minibatch/minibatch_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "common/interrupt.h"
#include "minibatch/batch_pipeline.h"
#include "minibatch/evaluate.h"

namespace strata {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double Ratio(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / whole : 0;
}

// The feature store's and the adjacency cache's work during the epoch, from their counters
// before and after it.
void CountEpochReads(const FeatureStoreStats& before, const FeatureStoreStats& after,
                     const AdjacencyStats& adjacency_before, const AdjacencyStats& adjacency_after,
                     EpochReport& report) {
  report.disk_bytes = after.bytes_read - before.bytes_read;
  report.disk_reads = after.reads - before.reads;
  report.hit_rate =
      Ratio(after.hot_hits + after.dynamic_hits - before.hot_hits - before.dynamic_hits,
            after.rows_unique - before.rows_unique);
  report.adjacency_reads = adjacency_after.reads - adjacency_before.reads;
  report.adjacency_hit_rate = Ratio(adjacency_after.cache_hits - adjacency_before.cache_hits,
                                    adjacency_after.entries - adjacency_before.entries);
}

void CopyStageBusy(const StageBusy& busy, EpochReport& report) {
  report.sample_busy_s = busy.sample_s;
  report.fetch_busy_s = busy.fetch_s;
  report.fetch_wait_s = busy.fetch_wait_s;
  report.max_batches_in_flight = busy.max_batches_in_flight;
  report.reads_in_flight_target = busy.reads_in_flight_target;
  report.device_iops = busy.peak_iops;
  report.read_latency_us = busy.read_latency_us;
  report.macro_batches = busy.macro_batches;
  report.reuse_mean = Ratio(busy.macro_passes, busy.macro_batches);
  report.load_bytes = busy.load_bytes;
  report.load_busy_s = busy.load_s;
  report.stall_s = busy.stall_s;
}

}  // namespace

MiniBatchRunner::MiniBatchRunner(Session& session, std::unique_ptr<BatchSource> source)
    : session_(session),
      optimizer_(MakeOptimizer(session.options().optimizer, session.model().model().Parameters())),
      source_(std::move(source)) {
  if (session.options().progress) progress_ = std::make_unique<ProgressBar>("training", 0);
}

MiniBatchRunner::~MiniBatchRunner() = default;

EpochReport MiniBatchRunner::TrainEpoch(uint64_t epoch) {
  const auto epoch_start = std::chrono::steady_clock::now();
  const FeatureStoreStats before = session_.store().stats();
  const AdjacencyStats adjacency_before = session_.graph().adjacency_stats();
  EpochReport report;
  report.epoch = epoch;
  double loss_sum = 0;
  uint64_t labelled = 0;
  const uint64_t max_batches = session_.options().max_batches;
  if (progress_) progress_->Restart(fmt::format("epoch {}", epoch), EpochBatches());
  {
    std::unique_ptr<BatchStream> stream = source_->StartEpoch(epoch);
    while (max_batches == 0 || report.batches < max_batches) {
      std::optional<ReadyBatch> ready = stream->Next();
      if (!ready) break;
      const auto step_start = std::chrono::steady_clock::now();
      const StepLoss loss = session_.model().TrainStep(*ready, epoch, *optimizer_);
      report.train_busy_s += Seconds(step_start);
      loss_sum += loss.loss_sum;
      labelled += loss.labelled;
      ++report.batches;
      ThrowIfInterrupted();
      ShowProgress(epoch, report.batches, ready->macro_batch, labelled ? loss_sum / labelled : 0.0,
                   Seconds(epoch_start), *stream, before);
    }
    CopyStageBusy(stream->busy(), report);
  }
  if (progress_) progress_->Finish();
  report.train_loss = labelled ? loss_sum / labelled : 0;
  report.topology_on_disk = !session_.graph().indices_resident();
  CountEpochReads(before, session_.store().stats(), adjacency_before,
                  session_.graph().adjacency_stats(), report);
  report.disk_bytes += report.load_bytes;  // the macro-batches' sequential reads
  report.time_s = Seconds(epoch_start);
  return report;
}

uint64_t MiniBatchRunner::EpochBatches() const {
  const uint64_t max_batches = session_.options().max_batches;
  const uint64_t all = source_->batches_per_epoch();
  return max_batches > 0 ? std::min(max_batches, all) : all;
}

double MiniBatchRunner::Accuracy(Split split) {
  const std::vector<uint64_t>& ids = session_.split_ids(split);
  if (session_.options().eval == EvalMode::kLayerwise) {
    return EvaluateLayerwise(session_, {ids})[0].accuracy();
  }
  return EvaluateNodes(session_, ids).accuracy();
}

void MiniBatchRunner::ShowProgress(uint64_t epoch, uint64_t batches, uint64_t macro_batch,
                                   double mean_loss, double elapsed_s, const BatchStream& stream,
                                   const FeatureStoreStats& epoch_start) {
  const uint64_t log_every = session_.options().log_every;
  const bool log = log_every && batches % log_every == 0;
  if (!progress_ && !log) return;
  const FeatureStoreStats now = stream.store_stats();
  std::string status =
      fmt::format("loss {:.4f}, {:.1f} batches/s, ", mean_loss, batches / elapsed_s);
  if (const StageBusy busy = stream.busy(); busy.macro_batches_planned > 0) {
    status +=
        fmt::format("macro-batch {}/{}, load {:.0f} MB/s, stall {:.1f} s", macro_batch + 1,
                    busy.macro_batches_planned, busy.load_bytes / elapsed_s / 1e6, busy.stall_s);
  } else {
    status +=
        fmt::format("disk {:.0f} MB/s, hit rate {:.3f}",
                    (now.bytes_read - epoch_start.bytes_read) / elapsed_s / 1e6, now.hit_rate());
  }
  if (progress_) {
    progress_->set_suffix(status);
    progress_->Update(batches);
  }
  if (log) {
    fmt::print(stderr, "epoch {} batch {}/{}: {}\n", epoch, batches, EpochBatches(), status);
  }
}

}  // namespace strata
