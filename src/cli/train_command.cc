// strata train DATASET --model sage|gcn|gat --layers L --hidden H --fanouts 15,10,5 ...
// strata eval DATASET --checkpoint DIR [--eval-fanouts ... | --layerwise]
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include "cli/command.h"
#include "cli/failure.h"
#include "cli/option_parsers.h"
#include "common/parallel.h"
#include "mpi/mpi_collective.h"
#include "strata/error.h"
#include "strata/memory_budget.h"
#include "strata/train.h"

namespace strata::cli {
namespace {

// Flags whose text is parsed into TrainOptions once the command line is read.
struct TrainArgs {
  TrainOptions options;
  std::string model = "sage";
  std::string optimizer = "adam";
  std::string fanouts;  // empty: 10,10, or 0 for each layer of an MLP
  std::string eval_fanouts;
  std::string store = "direct";
  std::string cache_policy = "sieve";
  std::string hot_policy = "presample";
  std::string budget;
  std::string topology = "auto";
  std::string adjacency_cache;
  std::string multistage;
  std::string aot;
  std::string sampler = "neighbor";
  uint32_t batch_dependency = 1;
  std::string labor_importance = "0";
  std::string macro_fanouts;
  std::string activation = "relu";
  std::string weight_decay_scope = "all";
  std::string eval_point = "final";
  std::string eval = "sampled";
  std::string reuse = "1";
  bool layerwise = false;  // eval: --layerwise
};

// Options shared by train and eval: the dataset, how features are read, evaluation.
void AddStoreOptions(CLI::App* cmd, TrainArgs& a) {
  TrainOptions& o = a.options;
  FeatureOptions& f = o.features;
  cmd->add_option("DATASET", o.dataset, "dataset directory")->required();
  cmd->add_option("--memory-budget", a.budget, "memory budget, e.g. 4G (default: RAM/4)");
  cmd->add_option("--feature-store", a.store, "direct, mmap or memory")
      ->check(CLI::IsMember({"direct", "mmap", "memory"}));
  cmd->add_option("--cache-fraction", f.cache_fraction,
                  "direct: cache as a share of the feature bytes (default: half of what the "
                  "budget leaves)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--hot-share", f.hot_share, "share of the cache for the static hot tier")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--hot-policy", a.hot_policy, "hot tier rows: presample, rpr or degree")
      ->check(CLI::IsMember({"presample", "rpr", "degree"}));
  cmd->add_option("--cache-policy", a.cache_policy, "dynamic tier: clock, sieve or s3fifo")
      ->check(CLI::IsMember({"clock", "sieve", "s3fifo"}));
  cmd->add_option("--io-depth", o.io_depth, "reads in flight")->capture_default_str();
  cmd->add_option("--topology", a.topology,
                  "auto (memory when it takes at most half the budget), memory or disk")
      ->check(CLI::IsMember({"auto", "memory", "disk"}));
  cmd->add_option("--adjacency-cache", a.adjacency_cache,
                  "topology on disk: adjacency cache size, e.g. 64M (default: budget/8; none "
                  "for partition and PBS runs without sampled evaluation)");
  cmd->add_option("--max-read-bytes", f.max_read_bytes,
                  "direct: bound on a coalesced read (a multiple of 4096)")
      ->capture_default_str();
  // All hardware threads: no result depends on the count, and on a 16-vCPU machine a full-graph
  // GCN epoch ran 2.7x faster on 16 threads than on 2 (docs/training.md, Threads).
  o.threads = std::min(4096u, DefaultThreads());
  cmd->add_option("--threads", o.threads,
                  "compute and sampling threads (default: all hardware threads)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--sampler", a.sampler,
                  "neighbor (uniform neighbour sampling) or labor (LABOR: the layer's "
                  "destinations share one variate per source, so fewer distinct rows)")
      ->capture_default_str();
  cmd->add_option("--labor-importance", a.labor_importance,
                  "labor: 0 (LABOR-0), N fixed-point steps of importance sampling, or star "
                  "(until they converge): fewer rows still, edges weighted by 1 / probability")
      ->capture_default_str();
  cmd->add_option("--batch-dependency", a.batch_dependency,
                  "labor: consecutive batches' variates drift over K batches, so their rows "
                  "overlap (1: independent batches)")
      ->capture_default_str();
  cmd->add_option("--eval-fanouts", a.eval_fanouts,
                  "fanouts for evaluation (default: full neighbourhoods)");
  cmd->add_option("--seed", o.seed, "random seed")->capture_default_str();
  cmd->add_flag("--row-normalize", f.row_normalize,
                "scale each input feature row to unit L1 norm (as the GCN/GAT papers do)");
  cmd->add_option("--scratch-dir", o.scratch_dir,
                  "where --full-graph's intermediates and layer-wise evaluation's activations go "
                  "when the budget cannot hold them (default $TMPDIR, else /tmp; unnamed files, "
                  "gone when the run ends)");
  cmd->add_flag("--scratch-float16", o.scratch_float16,
                "layer-wise evaluation's activations in scratch files as float16: half the disk "
                "space and transfers, each hidden value rounded once");
}

void Resolve(TrainArgs& a) {
  TrainOptions& o = a.options;
  o.model.kind = ParseModelKind(a.model);
  o.optimizer.kind = ParseOptimizerKind(a.optimizer);
  o.model.activation = ParseActivation(a.activation);
  o.optimizer.weight_decay_scope = ParseWeightDecayScope(a.weight_decay_scope);
  o.eval_point = ParseEvalPoint(a.eval_point);
  o.eval = ParseEvalMode(a.eval);
  if (!a.fanouts.empty()) {
    o.sampling.fanouts = ParseFanouts(a.fanouts, "--fanouts");
  } else if (o.model.kind == ModelKind::kMlp) {
    o.sampling.fanouts.assign(o.model.layers, 0);
  }
  o.sampling.labor = ParseLaborOptions(a.sampler, a.batch_dependency, a.labor_importance);
  if (!a.eval_fanouts.empty()) {
    o.sampling.eval_fanouts = ParseFanouts(a.eval_fanouts, "--eval-fanouts");
  }
  o.features.store = ParseFeatureStoreKind(a.store);
  o.features.cache_policy = ParseCachePolicyKind(a.cache_policy);
  o.features.hot_policy = ParseHotnessPolicy(a.hot_policy);
  o.memory_budget_bytes = MemoryBudgetFromOption(a.budget);
  o.topology.placement = ParseTopologyPlacement(a.topology);
  if (!a.multistage.empty()) o.multistage.method = ParseMultistageMethod(a.multistage);
  ParseReuse(a.reuse, o.multistage);
  ParseAheadOfTime(a.aot, o.multistage);
  if (!a.macro_fanouts.empty()) {
    o.multistage.fanouts = ParseFanouts(a.macro_fanouts, "--macro-fanouts");
  }
  if (!a.adjacency_cache.empty()) {
    o.topology.adjacency_cache_bytes =
        static_cast<int64_t>(ParseByteSize(a.adjacency_cache, "--adjacency-cache"));
  }
  o.progress = true;
}

void PrintEpoch(const EpochReport& r) {
  std::printf(
      "epoch %3llu  %7.2f s  loss %.4f  val %s  %llu batches  disk %.1f MB in %llu "
      "reads  hit rate %.3f  busy: sample %.1f s, fetch %.1f s (+%.1f s waiting), "
      "train %.1f s  peak RSS %.0f MB\n",
      static_cast<unsigned long long>(r.epoch), r.time_s, r.train_loss,
      std::isnan(r.val_acc) ? "  -   " : fmt::format("{:.4f}", r.val_acc).c_str(),
      static_cast<unsigned long long>(r.batches), r.disk_bytes / 1e6,
      static_cast<unsigned long long>(r.disk_reads), r.hit_rate, r.pipeline.sample_s,
      r.pipeline.fetch_s, r.pipeline.fetch_wait_s, r.train_busy_s, r.peak_rss_bytes / 1e6);
  std::fflush(stdout);
}

// A rank of a data-parallel run failed with the exception in flight: the others would wait
// for its next sum forever, so it says which rank and why, in one line, and ends the job.
[[noreturn]] void EndJob(MpiCollective& mpi) {
  const Failure failure = DescribeFailure(std::current_exception());
  std::fprintf(stderr, "strata: error: rank %u of %u: %s\n", mpi.rank(), mpi.size(),
               failure.message.c_str());
  std::fflush(stderr);
  mpi.Abort(failure.status);
}

}  // namespace

Runner AddTrainCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a GNN (mini-batch, out of core)");
  auto args = std::make_shared<TrainArgs>();
  TrainOptions& o = args->options;
  ModelOptions& m = o.model;
  AddStoreOptions(cmd, *args);
  cmd->add_option("--model", args->model,
                  "sage, gcn, gat, or mlp (each node's own features only: the baseline)")
      ->check(CLI::IsMember({"sage", "gcn", "gat", "mlp"}));
  cmd->add_option("--layers", m.layers, "number of layers")->capture_default_str();
  cmd->add_option("--hidden", m.hidden, "hidden size (per head for GAT)")->capture_default_str();
  cmd->add_option("--heads", m.heads, "GAT: attention heads in hidden layers")
      ->capture_default_str();
  cmd->add_option("--fanouts", args->fanouts,
                  "neighbours per layer, input layer first; -1 = all, 0 = none (default: 10,10, "
                  "or 0 for each layer of --model mlp)");
  cmd->add_option("--batch-size", o.sampling.batch_size, "seeds per batch")->capture_default_str();
  cmd->add_option("--batch-pieces", o.sampling.batch_pieces,
                  "sample and train each batch in this many pieces, one optimizer step per "
                  "batch: the batch's step in a piece's memory")
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "epochs")->capture_default_str();
  cmd->add_option("--lr", o.optimizer.lr, "learning rate")->capture_default_str();
  cmd->add_option("--dropout", m.dropout, "dropout")->capture_default_str();
  cmd->add_option("--input-dropout", m.input_dropout, "dropout on the input features")
      ->capture_default_str();
  cmd->add_option("--attention-dropout", m.attention_dropout, "GAT: dropout on attention")
      ->capture_default_str();
  cmd->add_option("--out-heads", m.out_heads, "GAT: heads averaged in the last layer")
      ->capture_default_str();
  cmd->add_option("--weight-decay", o.optimizer.weight_decay, "L2 weight decay")
      ->capture_default_str();
  cmd->add_option("--weight-decay-scope", args->weight_decay_scope,
                  "parameters weight decay applies to: all, weights (not biases) or first-layer "
                  "(its weights only, as Kipf's GCN)")
      ->check(CLI::IsMember({"all", "weights", "first-layer"}))
      ->capture_default_str();
  cmd->add_option("--bias", m.bias, "learned bias in every layer (true/false)")
      ->capture_default_str();
  cmd->add_option("--activation", args->activation, "between layers: relu, or elu (GAT paper)")
      ->check(CLI::IsMember({"relu", "elu"}))
      ->capture_default_str();
  cmd->add_option("--optimizer", args->optimizer, "adam or sgd")
      ->check(CLI::IsMember({"adam", "sgd"}));
  cmd->add_option("--run-ahead", o.max_run_ahead, "most batches sampled ahead of training")
      ->capture_default_str();
  cmd->add_option("--multistage", args->multistage,
                  "partition: macro-batches of a partitioned dataset's partitions; pbs: those "
                  "with their halo, its hidden layers from historical embeddings; lbs: "
                  "large-batch sampling, on any dataset");
  cmd->add_option("--macro-batch", o.multistage.macro_batch,
                  "partitions (lbs: mini-batches) per macro-batch (default: the most whose two "
                  "buffers fit)");
  cmd->add_option("--aot", args->aot,
                  "ahead-of-time sampling: a macro-batch's mini-batches sampled before its rows "
                  "are read, and only the rows they use read (true|false; default: true for "
                  "lbs, false for partition and pbs, whose halo is always read so)");
  cmd->add_option("--halo-hops", o.multistage.halo_hops,
                  "pbs: hops of halo nodes around a macro-batch's partitions (1)")
      ->capture_default_str();
  cmd->add_option("--macro-fanouts", args->macro_fanouts,
                  "fanouts of the mini-batches inside a macro-batch (default: --fanouts)");
  cmd->add_option("--reuse", args->reuse,
                  "passes over each macro-batch, 1..4; auto: up to 4, repeating a macro-batch "
                  "only while the next one is loading (the losses then depend on the disk)")
      ->capture_default_str();
  cmd->add_option("--eval-every", o.eval_every, "epochs between validation runs")
      ->capture_default_str();
  cmd->add_option("--eval", args->eval,
                  "how val and test are scored: sampled (--eval-fanouts), layerwise (each layer "
                  "once over the nodes' neighbourhoods, full, streamed in id order) or none (a "
                  "benchmark aid: accuracies are not measured)")
      ->check(CLI::IsMember({"sampled", "layerwise", "none"}))
      ->capture_default_str();
  cmd->add_option("--eval-point", args->eval_point,
                  "model whose accuracy is reported: final (last epoch) or best (best "
                  "validation); the metrics hold both")
      ->check(CLI::IsMember({"final", "best"}))
      ->capture_default_str();
  cmd->add_option("--patience", o.patience,
                  "stop once this many epochs have passed since the best validation accuracy "
                  "(0: train --epochs)")
      ->capture_default_str();
  cmd->add_option("--time-limit", o.time_limit_s,
                  "stop after the first epoch that ends this many seconds into the run (0: no "
                  "limit); that epoch is evaluated")
      ->capture_default_str();
  cmd->add_option("--log-every", o.log_every, "batches between progress lines on stderr");
  cmd->add_option("--max-batches", o.max_batches,
                  "end each epoch after this many batches (0: all; a benchmark aid)");
  cmd->add_option("--metrics-out", o.metrics_out, "JSON lines: one per epoch, one final");
  cmd->add_option("--checkpoint", o.checkpoint_dir, "directory for the checkpoint (each epoch)");
  cmd->add_flag("--resume", o.resume, "continue from the checkpoint in --checkpoint");
  cmd->add_flag(
      "--full-graph", o.full_graph,
      "GCN, GraphSAGE or GAT over the whole graph each epoch (no sampling), streamed from "
      "disk in row blocks when the budget cannot hold it");
  cmd->add_flag("--full-graph-max-memory", o.full_graph_max_memory,
                "with --full-graph: the MaxMemory baseline (equal resident shares of the "
                "adjacency and the features, the rest read synchronously) instead of RoBW");
  cmd->add_option("--full-graph-chunk-rows", o.full_graph_chunk_rows,
                  "with --full-graph: rows per chunk of intermediates on disk and per weight-"
                  "gradient sum (a multiple of 1024; the losses depend on it, not on the budget)")
      ->capture_default_str();
  cmd->add_option("--full-graph-slices", o.full_graph_slices,
                  "with --full-graph: propagate each layer in at most this many column slices "
                  "of ceil(width / S) columns, one resident at a time (GAT: groups of "
                  "ceil(heads / S) heads; 0: only when the budget needs it)")
      ->capture_default_str();
  return [args] {
    Resolve(*args);
    // Started by mpirun: one rank of a data-parallel run, which rank 0 reports.
    std::unique_ptr<MpiCollective> mpi;
    if (MpiCollective::Launched()) mpi = std::make_unique<MpiCollective>();
    const bool lead = mpi == nullptr || mpi->rank() == 0;
    std::function<void(const EpochReport&)> on_epoch;
    if (lead) on_epoch = PrintEpoch;
    TrainResult result;
    try {
      result = Train(args->options, on_epoch, mpi.get());
    } catch (...) {
      if (mpi != nullptr && mpi->size() > 1) EndJob(*mpi);
      throw;
    }
    if (!lead) return;
    if (result.stopped_by != StopReason::kEpochs && !result.epochs.empty()) {
      const bool patience = result.stopped_by == StopReason::kPatience;
      std::printf(
          "stopped after epoch %llu: %s\n",
          static_cast<unsigned long long>(result.epochs.back().epoch),
          patience ? "no better validation accuracy for --patience epochs" : "past --time-limit");
    }
    if (args->options.eval == EvalMode::kNone) {
      std::printf("final: not evaluated (--eval none); %.1f s\n", result.total_time_s);
      return;
    }
    std::printf(
        "final: test accuracy %.4f, val accuracy %.4f (%s model); best epoch %llu: val %.4f, "
        "test %.4f; %.1f s\n",
        result.test_acc, result.val_acc, EvalPointName(args->options.eval_point).data(),
        static_cast<unsigned long long>(result.best_epoch), result.best_val_acc,
        result.best_test_acc, result.total_time_s);
  };
}

Runner AddEvalCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Accuracy of a checkpoint on val and test");
  auto args = std::make_shared<TrainArgs>();
  AddStoreOptions(cmd, *args);
  cmd->add_option("--checkpoint", args->options.checkpoint_dir, "checkpoint directory")->required();
  cmd->add_flag("--layerwise", args->layerwise,
                "score val and test layer by layer: full neighbourhoods, the features and the "
                "adjacency read in id order, once per layer (more where the budget holds the "
                "sums of only part of a layer's nodes)");
  return [args] {
    args->fanouts = "-1";
    if (args->layerwise) args->eval = "layerwise";
    Resolve(*args);
    EvalResult result = EvaluateCheckpoint(args->options);
    std::printf("checkpoint after %llu epochs: val accuracy %.4f, test accuracy %.4f\n",
                static_cast<unsigned long long>(result.epoch), result.val_acc, result.test_acc);
  };
}

}  // namespace strata::cli
