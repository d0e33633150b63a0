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

}  // namespace

MiniBatchRunner::MiniBatchRunner(Session& session, std::unique_ptr<BatchSource> source,
                                 Collective* ranks)
    : session_(session),
      ranks_(ranks),
      optimizer_(MakeOptimizer(session.options().optimizer, session.model().model().Parameters())),
      source_(std::move(source)) {
  if (session.options().progress) progress_ = std::make_unique<ProgressBar>("training", 0);
  if (ranks_ != nullptr) {
    Model& model = session.model().model();
    std::vector<std::vector<Parameter>> layers;
    for (size_t l = 0; l < model.config().layers; ++l) {
      layers.push_back(model.layer(l).Parameters(fmt::format("layers.{}.", l)));
    }
    allreduce_ = std::make_unique<GradientAllreduce>(*ranks_, std::move(layers), session.budget());
  }
}

MiniBatchRunner::~MiniBatchRunner() = default;

EpochReport MiniBatchRunner::TrainEpoch(uint64_t epoch) {
  const EpochStart start{std::chrono::steady_clock::now(), session_.store().stats(),
                         session_.graph().adjacency_stats()};
  EpochReport report;
  report.epoch = epoch;
  report.topology_on_disk = !session_.graph().indices_resident();
  double loss_sum = 0;
  uint64_t labelled = 0;
  const uint64_t max_batches = session_.options().max_batches;
  if (progress_) progress_->Restart(fmt::format("epoch {}", epoch), EpochBatches());
  PipelineStats pipeline;
  const double allreduce_before = allreduce_ ? allreduce_->seconds() : 0;
  {
    std::unique_ptr<BatchStream> stream = source_->StartEpoch(epoch);
    // Progress measures the store through the stream, which counts from its own start: a
    // macro-batch stream reads no rows through the store and reports zeros, below the
    // evaluation's reads that the store's counters hold after the first epoch.
    EpochStart progress_start = start;
    progress_start.store = stream->store_stats();
    while (max_batches == 0 || report.batches < max_batches) {
      const auto wait_start = std::chrono::steady_clock::now();
      std::optional<ReadyBatch> ready = stream->Next();
      report.stall_s += Seconds(wait_start);
      if (!ready) break;
      const auto step_start = std::chrono::steady_clock::now();
      const StepLoss loss =
          session_.model().TrainStep(*ready, epoch, *optimizer_, allreduce_.get());
      report.train_busy_s += Seconds(step_start);
      loss_sum += loss.loss_sum;
      labelled += loss.labelled;
      report.train_loss = labelled ? loss_sum / labelled : 0;
      ++report.batches;
      ThrowIfInterrupted();
      ShowProgress(report, ready->macro_batch, *stream, progress_start);
    }
    pipeline = stream->pipeline_stats();
  }
  if (progress_) progress_->Finish();
  // After the stream, so that rows its run-ahead read and no step used count too.
  Measure(pipeline, session_.store().stats(), start, report);
  if (ranks_ != nullptr) {
    CombineRanks(loss_sum, labelled, allreduce_->seconds() - allreduce_before, report);
  }
  return report;
}

void MiniBatchRunner::CombineRanks(double loss_sum, uint64_t labelled, double allreduce_s,
                                   EpochReport& report) const {
  const uint32_t n = ranks_->size();
  const uint32_t r = ranks_->rank();
  // Each rank fills its own row of the table; the sum is then every rank's rows.
  constexpr size_t kColumns = 6;
  std::vector<double> table(2 + n * kColumns, 0.0);
  table[0] = loss_sum;
  table[1] = static_cast<double>(labelled);
  double* row = table.data() + 2 + r * kColumns;
  row[0] = report.time_s;
  row[1] = report.stall_s;
  row[2] = report.train_busy_s;
  row[3] = report.pipeline.sample_s;
  row[4] = report.pipeline.fetch_s;
  row[5] = allreduce_s;
  ranks_->Sum(table);
  report.train_loss = table[1] > 0 ? table[0] / table[1] : 0;
  DataParallelStats& stats = report.data_parallel.emplace();
  stats.ranks = n;
  stats.allreduce_s = allreduce_s;
  // One allreduce a batch, whose pieces count as batches.
  stats.allreduce_bytes =
      report.batches / session_.options().sampling.batch_pieces * allreduce_->bytes_per_step();
  for (uint32_t k = 0; k < n; ++k) {
    const double* t = table.data() + 2 + k * kColumns;
    stats.rank_times.push_back({t[0], t[1], t[2], t[3], t[4], t[5]});
  }
}

void MiniBatchRunner::Measure(const PipelineStats& pipeline, const FeatureStoreStats& store_now,
                              const EpochStart& start, EpochReport& report) const {
  report.pipeline = pipeline;
  CountEpochReads(start.store, store_now, start.adjacency, session_.graph().adjacency_stats(),
                  report);
  // The macro-batches' sequential reads.
  if (pipeline.multistage) {
    const MacroBatchStats& macro = *pipeline.multistage;
    report.disk_bytes += macro.load_bytes + macro.halo_bytes + macro.history_bytes_read;
  }
  report.time_s = Seconds(start.time);
}

uint64_t MiniBatchRunner::EpochBatches() const {
  const uint64_t max_batches = session_.options().max_batches;
  const uint64_t all = source_->batches_per_epoch();
  return max_batches > 0 ? std::min(max_batches, all) : all;
}

double MiniBatchRunner::Accuracy(Split split) {
  const std::vector<uint64_t>& ids = session_.split_ids(split);
  const uint32_t rank = ranks_ ? ranks_->rank() : 0;
  const uint32_t n = ranks_ ? ranks_->size() : 1;
  AccuracyCount count;
  if (session_.options().eval == EvalMode::kLayerwise) {
    // Each rank computes the layers over the closure of its share of the nodes.
    std::vector<uint64_t> share;
    std::span<const uint64_t> nodes = ids;
    if (n > 1) {
      for (size_t i = rank; i < ids.size(); i += n) share.push_back(ids[i]);
      nodes = share;
    }
    count = EvaluateLayerwise(session_, {nodes})[0];
  } else {
    count = EvaluateNodes(session_, ids, rank, n);
  }
  if (ranks_ != nullptr) {
    std::vector<double> sums = {static_cast<double>(count.correct),
                                static_cast<double>(count.labelled)};
    ranks_->Sum(sums);
    count.correct = static_cast<uint64_t>(sums[0]);
    count.labelled = static_cast<uint64_t>(sums[1]);
  }
  return count.accuracy();
}

void MiniBatchRunner::ShowProgress(EpochReport& report, uint64_t macro_batch,
                                   const BatchStream& stream, const EpochStart& start) const {
  const uint64_t log_every = session_.options().log_every;
  const bool log = log_every && report.batches % log_every == 0;
  if (!progress_ && !log) return;
  Measure(stream.pipeline_stats(), stream.store_stats(), start, report);
  std::string status = fmt::format("{:.1f} batches/s", report.batches / report.time_s);
  if (const auto& macro = report.pipeline.multistage) {
    status += fmt::format(", macro-batch {}/{}", macro_batch + 1, macro->planned);
  }
  status += ", " + ProgressLine(report);
  if (progress_) {
    progress_->set_suffix(status);
    progress_->Update(report.batches);
  }
  if (log) {
    fmt::print(stderr, "epoch {} batch {}/{}: {}\n", report.epoch, report.batches, EpochBatches(),
               status);
  }
}

}  // namespace strata
