// Train(): the epoch loop every training path shares. The path (mini-batches, macro-batches,
// or the full graph: siblings behind the same EpochRunner) trains each epoch; the loop decides when
// to evaluate, writes the checkpoint and the metrics records, and resumes from a checkpoint.
#include "strata/train.h"

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include "common/enum_names.h"
#include "fullgraph/full_graph_runner.h"
#include "minibatch/batch_pipeline.h"
#include "minibatch/minibatch_runner.h"
#include "minibatch/session.h"
#include "multistage/macro_batch_source.h"
#include "multistage/multistage_options.h"
#include "nn/blas_core.h"
#include "nn/gemm.h"
#include "strata/error.h"
#include "train/data_parallel.h"
#include "train/epoch_record.h"
#include "train/metrics_log.h"
#include "train/parameter_snapshot.h"
#include "train/training_checkpoint.h"

namespace strata {
namespace {

constexpr EnumNames<EvalPoint, 2> kEvalPointNames("evaluation point",
                                                  {{{EvalPoint::kFinal, "final"},
                                                    {EvalPoint::kBest, "best"}}});

// The checkpoint file, creating its directory; empty without --checkpoint.
std::string PrepareCheckpoint(const TrainOptions& o) {
  if (o.checkpoint_dir.empty()) {
    if (o.resume) throw Error::Input("--resume needs --checkpoint DIR");
    return {};
  }
  std::error_code error;
  std::filesystem::create_directories(o.checkpoint_dir, error);
  if (error) {
    throw Error::System("cannot create the checkpoint directory", o.checkpoint_dir, error.value());
  }
  return CheckpointPath(o.checkpoint_dir);
}

// The batches the options ask for: macro-batches with --multistage, else sampled
// neighbourhoods through the feature store.
std::unique_ptr<BatchSource> MakeBatchSource(Session& session) {
  const TrainOptions& o = session.options();
  if (o.multistage.enabled()) {
    return std::make_unique<MacroBatchSource>(session.dataset(), session.graph(),
                                              session.split_ids(Split::kTrain), o, session.budget(),
                                              nullptr, &session.batch_reserve());
  }
  PipelineOptions pipeline;
  pipeline.max_run_ahead = o.max_run_ahead;
  pipeline.max_reads_in_flight = o.io_depth;
  pipeline.batch_reserve = &session.batch_reserve();
  return std::make_unique<NeighborBatchSource>(session.sampler(), session.store(), pipeline,
                                               session.budget());
}

}  // namespace

constexpr EnumNames<EvalMode, 3> kEvalModeNames("evaluation", {{{EvalMode::kSampled, "sampled"},
                                                                {EvalMode::kLayerwise, "layerwise"},
                                                                {EvalMode::kNone, "none"}}});

EvalMode ParseEvalMode(std::string_view name) { return kEvalModeNames.Parse(name); }
std::string_view EvalModeName(EvalMode mode) { return kEvalModeNames.Name(mode); }
constexpr EnumNames<StopReason, 3> kStopReasonNames("stop reason",
                                                    {{{StopReason::kEpochs, "epochs"},
                                                      {StopReason::kPatience, "patience"},
                                                      {StopReason::kTimeLimit, "time_limit"}}});
std::string_view StopReasonName(StopReason reason) { return kStopReasonNames.Name(reason); }
EvalPoint ParseEvalPoint(std::string_view name) { return kEvalPointNames.Parse(name); }
std::string_view EvalPointName(EvalPoint point) { return kEvalPointNames.Name(point); }

TrainResult Train(const TrainOptions& options,
                  const std::function<void(const EpochReport&)>& on_epoch, Collective* ranks) {
  // One rank is today's one process, bit for bit.
  if (ranks != nullptr && ranks->size() < 2) ranks = nullptr;
  const TrainOptions o = ranks != nullptr ? DataParallelOptions(options, *ranks) : options;
  // Rank 0 alone writes the metrics and the checkpoint, and reads the checkpoint to resume.
  const bool writer = ranks == nullptr || ranks->rank() == 0;
  CheckTrainOptions(o);
  CheckMultistageOptions(o.multistage, o.model.layers);
  MetricsLog metrics(writer ? o.metrics_out : std::string());
  const auto start = std::chrono::steady_clock::now();
  // The path's runner; with mini-batches it works inside a Session, which must outlive it.
  std::unique_ptr<Session> session;
  std::unique_ptr<EpochRunner> path;
  MemoryBudget* budget = nullptr;
  if (o.full_graph) {
    auto full_graph = std::make_unique<FullGraphRunner>(o, Dataset::Open(o.dataset));
    budget = &full_graph->budget();
    const FullGraphPlan& plan = full_graph->plan();
    auto where = [](bool resident, uint64_t blocks) {
      return resident ? std::string("in memory") : fmt::format("streamed in {} blocks", blocks);
    };
    std::string propagation;
    if (plan.slices > 1 && plan.heads_per_slice > 0) {
      propagation = fmt::format(", attention in {} groups of {} heads (gathering {} columns)",
                                plan.slices, plan.heads_per_slice, plan.slice_width);
    } else if (plan.slices > 1) {
      propagation =
          fmt::format(", propagation in {} column slices of {}", plan.slices, plan.slice_width);
    }
    fmt::print(stderr, "full graph{}: adjacency {} ({}), features {}, intermediates {}{}\n",
               o.full_graph_max_memory ? " (MaxMemory baseline)" : "",
               where(plan.adjacency_resident, plan.adjacency_blocks),
               plan.symmetric ? "symmetric" : "directed",
               where(plan.features_resident, plan.feature_blocks),
               plan.intermediates_on_disk ? "row-blocked on disk" : "in memory", propagation);
    path = std::move(full_graph);
  } else {
    SourceNeeds source_needs;
    if (o.multistage.enabled()) {
      source_needs = [&o](const Dataset& dataset, const CscGraph& graph, const BatchBound& batch) {
        return MacroBatchLeastBytes(dataset, graph, o, batch);
      };
    }
    session = std::make_unique<Session>(o, Dataset::Open(o.dataset), true, source_needs);
    budget = &session->budget();
    path = std::make_unique<MiniBatchRunner>(*session, MakeBatchSource(*session), ranks);
  }
  EpochRunner& runner = *path;
  const std::string checkpoint = writer ? PrepareCheckpoint(o) : std::string();
  const RunIdentity identity = IdentifyRun(o.dataset, o.seed);

  TrainResult result;
  ParameterSnapshot best(runner.Parameters(), *budget);
  std::vector<Parameter> best_views = best.Views(runner.Parameters());
  double best_val = -1;
  uint64_t first_epoch = 0;
  // Before rank 0 restores a checkpoint: every rank starts from the same parameters.
  if (ranks != nullptr) {
    AgreeOnRun(*ranks, identity, runner.Parameters(), o.epochs, runner.planned_batches());
  }
  std::optional<ResumePoint> point;
  if (o.resume && writer && std::filesystem::exists(checkpoint)) {
    point = ResumeCheckpoint(checkpoint, runner.model_config(), runner.Parameters(),
                             runner.optimizer(), identity, best_views);
  }
  if (o.resume && ranks != nullptr) {
    point = ShareResumePoint(*ranks, point, runner.Parameters(), runner.optimizer(), best_views);
  }
  if (point) {
    first_epoch = point->epochs_done;
    if (point->best) {
      best.MarkRestored();
      best_val = point->best->val_acc;
      result.best_epoch = point->best->epoch;
    }
  }
  auto save_checkpoint = [&](uint64_t epochs_done) {
    if (checkpoint.empty()) return;
    const BestModel best_model{result.best_epoch, best_val, best_views};
    SaveCheckpoint(checkpoint, runner.model_config(), runner.Parameters(), runner.optimizer(),
                   epochs_done, identity, best.saved() ? &best_model : nullptr);
  };
  auto seconds_since_start = [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // One past the last epoch trained: o.epochs unless the run stops early.
  uint64_t end_epoch = o.epochs;
  for (uint64_t epoch = first_epoch; epoch < end_epoch; ++epoch) {
    const GemmCounters gemm_before = ReadGemmCounters();
    EpochReport report = runner.TrainEpoch(epoch);
    report.gemm_gflops = GemmGflops(gemm_before, ReadGemmCounters());
    bool last = epoch + 1 == o.epochs;
    if (!last && o.time_limit_s > 0) {
      auto out_of_time = static_cast<std::byte>(seconds_since_start() >= o.time_limit_s);
      // Every rank must stop after the same epoch: rank 0's clock decides.
      if (ranks != nullptr) ranks->Broadcast({&out_of_time, 1}, 0);
      if (out_of_time != std::byte{0}) {
        last = true;
        result.stopped_by = StopReason::kTimeLimit;
      }
    }
    const bool evaluate = o.eval != EvalMode::kNone;
    if (evaluate && (last || (o.eval_every && (epoch + 1) % o.eval_every == 0))) {
      try {
        report.val_acc = runner.Accuracy(Split::kVal);
      } catch (...) {
        // The epoch is trained: whatever stops its evaluation (an interrupt, a failing disk),
        // --resume goes on from it.
        save_checkpoint(epoch + 1);
        throw;
      }
      if (report.val_acc > best_val) {
        best_val = report.val_acc;
        result.best_epoch = epoch;
        best.Save(runner.Parameters());
      }
      if (!last && o.patience > 0 && epoch - result.best_epoch >= o.patience) {
        last = true;
        result.stopped_by = StopReason::kPatience;
      }
    }
    if (last) end_epoch = epoch + 1;
    report.elapsed_s = seconds_since_start();
    report.peak_rss_bytes = PeakRssBytes();
    if (ranks != nullptr) {
      report.data_parallel->parameter_hash = AgreeOnParameters(*ranks, runner.Parameters());
    }
    save_checkpoint(epoch + 1);
    metrics.Append(EpochRecord(report));
    result.epochs.push_back(report);
    if (on_epoch) on_epoch(report);
  }
  const double not_evaluated = std::numeric_limits<double>::quiet_NaN();
  const bool evaluate = o.eval != EvalMode::kNone;
  // The last epoch was evaluated; only a run resumed at its end has not trained one.
  result.final_val_acc = !evaluate               ? not_evaluated
                         : result.epochs.empty() ? runner.Accuracy(Split::kVal)
                                                 : result.epochs.back().val_acc;
  result.final_test_acc = evaluate ? runner.Accuracy(Split::kTest) : not_evaluated;
  result.best_val_acc = result.final_val_acc;
  result.best_test_acc = result.final_test_acc;
  if (evaluate && best.saved() && result.best_epoch + 1 != end_epoch) {
    best.Restore(runner.Parameters());
    result.best_val_acc = best_val;
    result.best_test_acc = runner.Accuracy(Split::kTest);
  }
  const bool at_best = o.eval_point == EvalPoint::kBest;
  result.val_acc = at_best ? result.best_val_acc : result.final_val_acc;
  result.test_acc = at_best ? result.best_test_acc : result.final_test_acc;
  result.total_time_s = seconds_since_start();
  result.blas_core = BlasCoreName();
  metrics.Append(
      FinalRecord(result, o.eval_point, PeakRssBytes(), o.memory_budget_bytes, budget->peak()));
  return result;
}

}  // namespace strata
