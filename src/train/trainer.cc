// Train(): the epoch loop every training path shares. The path (today mini-batches; the
// macro-batch and full-graph paths are siblings behind the same EpochRunner) trains each
// epoch; the loop decides when to evaluate, writes the checkpoint and the metrics records,
// and resumes from a checkpoint.
#include <chrono>
#include <filesystem>
#include <memory>

#include "strata/error.h"
#include "strata/train.h"
#include "train/epoch_record.h"
#include "train/metrics_log.h"
#include "train/minibatch_runner.h"
#include "train/session.h"
#include "train/training_checkpoint.h"

namespace strata {
namespace {

// The checkpoint file, creating its directory; empty without --checkpoint.
std::string PrepareCheckpoint(const TrainOptions& o) {
  if (o.checkpoint_dir.empty()) {
    if (o.resume) throw Error::Input("--resume needs --checkpoint DIR");
    return {};
  }
  std::filesystem::create_directories(o.checkpoint_dir);
  return CheckpointPath(o.checkpoint_dir);
}

// The first epoch to train: after the checkpoint's when resuming from one, else 0.
uint64_t Resume(const TrainOptions& o, const std::string& checkpoint, EpochRunner& runner) {
  if (!o.resume || !std::filesystem::exists(checkpoint)) return 0;
  return RestoreCheckpoint(checkpoint, runner.Parameters(), &runner.optimizer());
}

}  // namespace

TrainResult Train(const TrainOptions& o, const std::function<void(const EpochReport&)>& on_epoch) {
  CheckTrainOptions(o);
  const auto start = std::chrono::steady_clock::now();
  Session session(o, Dataset::Open(o.dataset));
  MiniBatchRunner runner(session, MakeBatchSource(session));
  MetricsLog metrics(o.metrics_out);
  const std::string checkpoint = PrepareCheckpoint(o);
  const uint64_t first_epoch = Resume(o, checkpoint, runner);

  TrainResult result;
  double best_val = -1;
  for (uint64_t epoch = first_epoch; epoch < o.epochs; ++epoch) {
    EpochReport report = runner.TrainEpoch(epoch);
    const bool last = epoch + 1 == o.epochs;
    if (last || (o.eval_every && (epoch + 1) % o.eval_every == 0)) {
      report.val_acc = runner.Accuracy(Split::kVal);
      if (report.val_acc > best_val) {
        best_val = report.val_acc;
        result.best_epoch = epoch;
      }
    }
    report.peak_rss_bytes = PeakRssBytes();
    if (!checkpoint.empty()) {
      SaveCheckpoint(checkpoint, runner.model_config(), runner.Parameters(), runner.optimizer(),
                     epoch + 1);
    }
    metrics.Append(EpochRecord(report));
    result.epochs.push_back(report);
    if (on_epoch) on_epoch(report);
  }
  result.val_acc = runner.Accuracy(Split::kVal);
  result.test_acc = runner.Accuracy(Split::kTest);
  result.total_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics.Append(FinalRecord(result, PeakRssBytes(), o.memory_budget_bytes));
  return result;
}

}  // namespace strata
