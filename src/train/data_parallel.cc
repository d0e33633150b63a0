#include "train/data_parallel.h"

#include <fmt/format.h>

#include <vector>

#include "common/random.h"
#include "nn/parameter_hash.h"
#include "strata/error.h"

namespace strata {
namespace {

// A matrix sent from rank 0: in one piece, or row by row where its stride exceeds its width.
void BroadcastMatrix(Collective& ranks, MatrixSpan<float> m) {
  if (m.contiguous()) {
    ranks.Broadcast(std::as_writable_bytes(std::span<float>(m.data(), m.rows() * m.cols())), 0);
    return;
  }
  for (size_t r = 0; r < m.rows(); ++r) ranks.Broadcast(std::as_writable_bytes(m.row_span(r)), 0);
}

// A plain struct's bytes sent from rank 0.
template <typename T>
void BroadcastValue(Collective& ranks, T& value) {
  ranks.Broadcast(std::as_writable_bytes(std::span<T>(&value, 1)), 0);
}

// How many ranks' `value` differs from rank 0's (the same on every rank).
uint64_t RanksDiffering(Collective& ranks, uint64_t value) {
  uint64_t first = value;
  BroadcastValue(ranks, first);
  std::vector<double> differ = {value != first ? 1.0 : 0.0};
  ranks.Sum(differ);
  return static_cast<uint64_t>(differ[0]);
}

}  // namespace

TrainOptions DataParallelOptions(const TrainOptions& options, const Collective& ranks) {
  const uint32_t n = ranks.size();
  if (options.full_graph) {
    throw Error::Input("--full-graph trains in one process: run it without mpirun (or -np 1)");
  }
  if (options.multistage.adaptive_reuse) {
    throw Error::Input(
        "--reuse auto follows one rank's disk, and ranks must take the same steps: give a "
        "number of passes");
  }
  const uint64_t batch = options.sampling.batch_size;
  // A step's labelled seeds travel as float32 beside the gradients: exact below 2^24.
  if (batch >= (uint64_t{1} << 24)) {
    throw Error::Input("--batch-size must be below 16,777,216 with mpirun");
  }
  if (batch % n != 0) {
    throw Error::Input(fmt::format(
        "--batch-size {} (the batch of all ranks together) does not divide among {} ranks", batch,
        n));
  }
  if (batch / n < options.sampling.batch_pieces) {
    throw Error::Input(fmt::format(
        "--batch-pieces {} cuts each rank's {} seeds of a batch into pieces without seeds",
        options.sampling.batch_pieces, batch / n));
  }
  TrainOptions o = options;
  o.sampling.batch_size = batch / n;
  o.sampling.rank = ranks.rank();
  o.sampling.world_size = n;
  o.multistage.rank = ranks.rank();
  o.multistage.world_size = n;
  // Rank 0 reports for all.
  if (ranks.rank() != 0) {
    o.progress = false;
    o.log_every = 0;
  }
  return o;
}

std::optional<ResumePoint> ShareResumePoint(Collective& ranks, std::optional<ResumePoint> point,
                                            std::span<const Parameter> params, Optimizer& optimizer,
                                            std::span<const Parameter> best_snapshot) {
  struct Header {
    uint64_t found = 0;
    uint64_t epochs_done = 0;
    uint64_t optimizer_steps = 0;
    uint64_t has_best = 0;
    uint64_t best_epoch = 0;
    double best_val_acc = 0;
  } header;
  if (point) {
    header.found = 1;
    header.epochs_done = point->epochs_done;
    header.optimizer_steps = optimizer.steps();
    if (point->best) {
      header.has_best = 1;
      header.best_epoch = point->best->epoch;
      header.best_val_acc = point->best->val_acc;
    }
  }
  BroadcastValue(ranks, header);
  if (!header.found) return std::nullopt;
  for (const Parameter& p : params) BroadcastMatrix(ranks, p.value);
  for (const OptimizerState& s : optimizer.State()) BroadcastMatrix(ranks, s.values);
  optimizer.set_steps(header.optimizer_steps);
  ResumePoint shared;
  shared.epochs_done = header.epochs_done;
  if (header.has_best) {
    for (const Parameter& p : best_snapshot) BroadcastMatrix(ranks, p.value);
    shared.best = BestModel{header.best_epoch, header.best_val_acc, best_snapshot};
  }
  return shared;
}

void AgreeOnRun(Collective& ranks, const RunIdentity& identity, std::span<const Parameter> params,
                uint64_t epochs, uint64_t planned_batches) {
  uint64_t run = 0;
  for (uint64_t part : {identity.dataset_meta_xxh64, identity.seed, ParameterValuesHash(params),
                        epochs, planned_batches}) {
    run = MixSeed(run, part);
  }
  if (const uint64_t differing = RanksDiffering(ranks, run)) {
    throw Error::Input(fmt::format(
        "{} of {} ranks would not train what rank 0 does (another dataset, seed, model, "
        "epoch count or number of steps an epoch plans, which with --multistage follows each "
        "rank's --memory-budget): start every rank with the same options and dataset",
        differing, ranks.size()));
  }
}

std::string AgreeOnParameters(Collective& ranks, std::span<const Parameter> params) {
  const uint64_t mine = ParameterValuesHash(params);
  if (const uint64_t differing = RanksDiffering(ranks, mine)) {
    throw Error::Internal(fmt::format(
        "the ranks' parameters differ after the epoch ({} ranks of {} disagree with rank 0)",
        differing, ranks.size()));
  }
  return fmt::format("{:016x}", mine);
}

}  // namespace strata
