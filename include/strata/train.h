// Training and evaluating a GNN on a dataset within a memory budget: what `strata train` and
// `strata eval` run. The options are grouped by the part of the system that reads them (the
// network, the optimizer, the sampler, the feature store, the topology), so that each part is
// handed its own group; docs/training.md describes the run they configure.
//
// Determinism: a batch's samples, dropout masks and initial weights depend only on the seed,
// the epoch and the batch index, so the feature store, the topology's placement and the
// pipeline's depth never change the losses.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "strata/collective.h"
#include "strata/epoch_report.h"
#include "strata/feature_store.h"
#include "strata/graph.h"
#include "strata/model_options.h"
#include "strata/neighbor_sampler.h"

namespace strata {

// How the neighbour sampler draws batches (strata/neighbor_sampler.h).
struct SamplingOptions {
  // Input layer first; -1 = all neighbours, 0 = none (every fanout of an MLP).
  std::vector<int> fanouts = {10, 10};
  std::vector<int> eval_fanouts;  // empty: all neighbours (none for an MLP)
  uint64_t batch_size = 1000;
  // --batch-pieces k: each batch sampled and trained in k parts of its seeds, the gradients
  // summed before the optimizer steps (SeedOrder::pieces): the batch's step within the memory
  // of a part's, up to rounding (and GAT's attention dropout masks, drawn per piece).
  uint32_t batch_pieces = 1;
  LaborOptions labor;  // --sampler labor [--batch-dependency K]: training and evaluation
  // Data-parallel training: this process is rank `rank` of `world_size` and samples its share
  // of every batch, every world_size-th seed of the epoch's order (SeedOrder), batch_size of
  // them; Train sets these, and batch_size to the global batch over world_size, from its
  // Collective, so that the ranks' shares together are the batch one process would sample.
  uint32_t rank = 0;
  uint32_t world_size = 1;
};

// Where a batch's input features come from and how they are prepared.
struct FeatureOptions {
  FeatureStoreKind store = FeatureStoreKind::kDirect;
  // The direct store's cache: a share of the feature bytes; < 0: half of what the budget
  // leaves once batches in flight are provided for (minibatch/cache_sizing.h).
  double cache_fraction = -1;
  double hot_share = 0.5;  // of the cache, for the static hot tier
  HotnessPolicy hot_policy = HotnessPolicy::kPresample;
  CachePolicyKind cache_policy = CachePolicyKind::kSieve;
  uint32_t max_read_bytes = 64 << 10;  // bound on a coalesced read
  bool row_normalize = false;  // scale each input row to unit L1 norm (the papers' preprocessing)
};

// Multistage training: macro-batches loaded a few at a time into one of two buffers while the
// other trains, mini-batches sampled inside the macro-batch's graph. kPartition (Hanoi): a
// macro-batch is a few partitions of a partitioned dataset (`strata partition`) and the hubs,
// read with large sequential reads. kLargeBatch (Joestar's LBS): a macro-batch is the sampled
// neighbourhood of `macro_batch` mini-batches' seeds, gathered once.
// kPbs: partition-based sampling, the partitions' macro-batches with their halo and historical
// embeddings (Joestar-II).
enum class MultistageMethod { kNone, kPartition, kLargeBatch, kPbs };
MultistageMethod ParseMultistageMethod(std::string_view name);  // partition | lbs | pbs
std::string_view MultistageMethodName(MultistageMethod method);

struct MultistageOptions {
  MultistageMethod method = MultistageMethod::kNone;
  // Partitions (or, for LBS, mini-batches) per macro-batch; 0: the most whose two buffers fit.
  uint32_t macro_batch = 0;
  uint32_t reuse = 1;  // passes over each macro-batch (1..4); adaptive: the most
  // With adaptive reuse a macro-batch gets another pass only while the next one is still
  // loading, so the disk's speed decides the passes, and the losses depend on it: the one
  // setting where a seed does not fix the numbers, hence off by default.
  bool adaptive_reuse = false;
  std::vector<int> fanouts;  // of the mini-batches inside a macro-batch (empty: the sampling's)
  // Data-parallel loading: rank `rank` of `world_size` takes macro-batches rank, rank +
  // world_size, ... of each epoch, and every rank's epoch ends after as many batches as the
  // rank with the fewest has (the others drop the rest of their last macro-batch), so that
  // all ranks take the same number of steps. Adaptive reuse is one rank only.
  uint32_t rank = 0;
  uint32_t world_size = 1;
  // PBS: hops of halo around a macro-batch's partitions (1, the thesis's).
  uint32_t halo_hops = 1;
  // Ahead-of-time sampling (Joestar): a macro-batch's mini-batches are sampled, structure
  // only, before its feature rows are read, and only the rows they use are read. The batches
  // are the same either way. Set from --aot; ResolveAheadOfTime fills the default.
  bool ahead_of_time = false;

  bool enabled() const { return method != MultistageMethod::kNone; }
};
// Sets the reuse from "auto" (adaptive, up to 4 passes) or a number of passes.
void ParseReuse(std::string_view text, MultistageOptions& o);
// Sets ahead_of_time from "true" or "false", or (empty) to the method's default, which o.method
// must be set for: on for lbs, off for partition and pbs (docs/training.md says why).
void ParseAheadOfTime(std::string_view text, MultistageOptions& o);

// Which model a run's accuracies are those of: the last epoch's (Kipf's GCN reference) or
// the epoch with the best validation accuracy (early-stopping recipes). Both are always
// measured and written to the metrics; this picks the one reported as test_acc.
enum class EvalPoint { kFinal, kBest };
EvalPoint ParseEvalPoint(std::string_view name);  // final | best
std::string_view EvalPointName(EvalPoint point);

// How validation and test nodes are scored: by mini-batches sampled with the evaluation
// fanouts; layer-wise, each layer computed once for the in-neighbourhood closure of the nodes,
// with full neighbourhoods, the features and the adjacency streamed in id order (the exact
// model, as full-neighbourhood batches compute it, without gathering each batch's
// neighbourhood again: docs/training.md, "Layer-wise inference"); or not at all (a benchmark
// aid: on a graph of 100M nodes scoring takes longer than the batches being timed). Not
// evaluating leaves every accuracy NaN (null in the metrics). The full-graph path always
// scores the whole graph exactly.
enum class EvalMode { kSampled, kLayerwise, kNone };
EvalMode ParseEvalMode(std::string_view name);  // sampled | layerwise | none
std::string_view EvalModeName(EvalMode mode);

struct TrainOptions {
  std::string dataset;
  ModelOptions model;
  OptimizerOptions optimizer;
  SamplingOptions sampling;
  FeatureOptions features;
  MultistageOptions multistage;
  TopologyOptions topology = {TopologyPlacement::kAuto, -1, {}};  // io.depth: from io_depth
  uint64_t seed = 0;
  uint64_t memory_budget_bytes = 0;
  uint32_t io_depth = 256;     // reads in flight, for features and topology on disk
  uint32_t max_run_ahead = 8;  // batches sampled ahead of the training step
  unsigned threads = 2;        // sampling and compute threads
  uint64_t epochs = 10;
  // Batches after which an epoch ends (0: all of them). A benchmark aid for graphs whose epoch
  // takes hours: the batches trained are the epoch's first, as without it.
  uint64_t max_batches = 0;
  uint64_t eval_every = 1;  // epochs between validation runs (0: only at the end)
  // Early stopping. The run ends at an evaluated epoch `patience` epochs after the one with the
  // best validation accuracy (0: never), and after the first epoch that ends `time_limit_s`
  // seconds or more into the run (0: no limit); that epoch is evaluated. `epochs` stays the
  // most a run trains.
  uint64_t patience = 0;
  double time_limit_s = 0;
  EvalPoint eval_point = EvalPoint::kFinal;
  EvalMode eval = EvalMode::kSampled;
  uint64_t log_every = 0;   // batches between progress lines on stderr (0: none)
  std::string metrics_out;  // JSON lines: one per epoch, one final (empty: none)
  std::string checkpoint_dir;
  bool resume = false;    // continue from the checkpoint in checkpoint_dir
  bool progress = false;  // on stderr: a bar on a terminal, else a line every 10 s
  // One forward and backward over the whole graph per epoch (GCN only), the adjacency and the
  // features streamed in row blocks when they do not fit (docs/training.md, "Full-graph").
  bool full_graph = false;
  // Instead of the RoBW plan, AIRES's MaxMemory baseline: equal shares of the budget for the
  // adjacency and the features, each a resident prefix plus synchronous reads of the rest.
  bool full_graph_max_memory = false;
  // Where the full graph's N-row intermediates and layer-wise evaluation's activations go when
  // the budget cannot hold them (empty: $TMPDIR, else /tmp). The files are unnamed and vanish
  // with the process.
  std::string scratch_dir;
  // Layer-wise evaluation's activations in scratch files as float16: half the disk space and
  // transfers, each hidden value rounded once (full-graph intermediates stay float32).
  bool scratch_float16 = false;
  // Rows per chunk of those intermediates, and per weight-gradient sum of the hidden layers:
  // fixed whatever the budget, so that the sums, and the losses, are too. A multiple of 1024.
  // Every intermediate on disk is charged two chunks and a bit per value (a sliced one three
  // chunks), so smaller chunks lower the smallest budgets; 16,384 rows of 16 columns are
  // still 1 MiB transfers.
  uint64_t full_graph_chunk_rows = 16384;
  // The full graph's propagation input in column slices of ceil(width / this) columns (GAT:
  // its hidden layers in groups of ceil(heads / this) heads; 0: resident whole when it fits,
  // else the widest slices or largest groups that fit). Slicing changes no number.
  uint32_t full_graph_slices = 0;
};

// Why a run ended: it trained `epochs` epochs, its validation accuracy stopped improving, or
// it ran out of time (TrainOptions' early stopping).
enum class StopReason { kEpochs, kPatience, kTimeLimit };
std::string_view StopReasonName(StopReason reason);  // epochs | patience | time_limit

struct TrainResult {
  double test_acc = 0;  // of the model options.eval_point picks
  double val_acc = 0;
  double final_test_acc = 0;  // the last epoch's model
  double final_val_acc = 0;
  // The evaluated epoch with the highest validation accuracy (the first such one) among the
  // epochs this run trained, and its model's accuracies.
  uint64_t best_epoch = 0;
  double best_val_acc = 0;
  double best_test_acc = 0;
  double total_time_s = 0;
  StopReason stopped_by = StopReason::kEpochs;
  std::string blas_core;  // the OpenBLAS kernels that ran the dense products, e.g. "SkylakeX"
  std::vector<EpochReport> epochs;
};

// Trains, calling `on_epoch` after each epoch; returns the final and the best-validation
// model's accuracies.
//
// With `ranks` of more than one rank (mpirun), every rank calls Train with the same options and
// trains the same model on its share of each batch (options.sampling.batch_size is the batch
// of all ranks together, and must divide among them; macro-batches go to the ranks in turn),
// the gradients averaged over the ranks at every step; evaluation is split between the ranks
// and summed; rank 0 alone writes the metrics and the checkpoint, and on --resume reads the
// checkpoint and sends its state to the others. The full graph is one process only.
TrainResult Train(const TrainOptions& options,
                  const std::function<void(const EpochReport&)>& on_epoch = {},
                  Collective* ranks = nullptr);

struct EvalResult {
  double val_acc = 0;
  double test_acc = 0;
  uint64_t epoch = 0;  // epochs the checkpoint had completed
};

// Loads the model of `options.checkpoint_dir` (its network options replace options.model)
// and measures val/test accuracy with options.sampling.eval_fanouts (empty: full
// neighbourhoods) and options.features; with options.eval layer-wise, in one layer-wise pass
// over both splits, the direct store given no cache.
EvalResult EvaluateCheckpoint(const TrainOptions& options);

}  // namespace strata
