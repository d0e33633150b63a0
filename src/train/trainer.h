// Trainer runs mini-batch GNN training on a dataset within a memory budget: the topology and
// labels resident, features from a FeatureStore (memory, mmap, or direct I/O behind the
// tiered cache), batches from the NeighborSampler through the BatchPipeline, and the model's
// step on the calling thread. It evaluates, reports each epoch, checkpoints atomically and
// resumes.
//
// Determinism: a batch's samples, dropout masks and initial weights depend only on the seed,
// the epoch and the batch index, so the store kind and the pipeline depth never change the
// losses.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "features/cache_policy.h"
#include "features/open_feature_store.h"
#include "graph/hotness.h"
#include "nn/model.h"

namespace strata {

struct TrainOptions {
  std::string dataset;
  ModelKind model = ModelKind::kSage;
  size_t layers = 2;
  size_t hidden = 256;
  size_t heads = 8;                     // GAT hidden layers
  std::vector<int> fanouts = {10, 10};  // input layer first; -1 = all neighbours
  std::vector<int> eval_fanouts;        // empty: all neighbours
  uint64_t batch_size = 1000;
  uint64_t epochs = 10;
  double lr = 0.01;
  double dropout = 0.5;
  double input_dropout = 0;      // on the input features (the GCN and GAT papers use it)
  bool row_normalize = false;    // scale each input row to unit L1 norm (the papers' preprocessing)
  double attention_dropout = 0;  // GAT: on the attention coefficients
  size_t out_heads = 1;          // GAT: heads averaged in the last layer
  double weight_decay = 0;
  std::string optimizer = "adam";  // adam | sgd
  uint64_t seed = 0;
  uint64_t memory_budget_bytes = 0;
  FeatureStoreKind store = FeatureStoreKind::kDirect;
  double cache_fraction = -1;  // < 0: what the budget leaves
  double hot_share = 0.5;
  HotnessPolicy hot_policy = HotnessPolicy::kPresample;
  CachePolicyKind cache_policy = CachePolicyKind::kSieve;
  enum class Topology { kAuto, kMemory, kDisk };
  // kAuto: in memory when indptr and indices take at most half the budget, else on disk.
  Topology topology = Topology::kAuto;
  int64_t adjacency_cache_bytes = -1;  // on disk; < 0: an eighth of the budget
  uint32_t io_depth = 256;
  uint32_t max_read_bytes = 64 << 10;
  uint32_t max_run_ahead = 8;
  unsigned threads = 2;
  uint64_t eval_every = 1;  // epochs between validation runs (0: only at the end)
  uint64_t log_every = 0;   // batches between progress lines on stderr (0: none)
  std::string metrics_out;
  std::string checkpoint_dir;
  bool resume = false;
  bool progress = false;
};

struct EpochReport {
  uint64_t epoch = 0;
  double time_s = 0;
  double train_loss = 0;
  double val_acc = std::numeric_limits<double>::quiet_NaN();  // NaN when not evaluated
  uint64_t batches = 0;
  uint64_t disk_bytes = 0;
  uint64_t disk_reads = 0;
  double hit_rate = 0;
  uint64_t adjacency_reads = 0;   // topology on disk: reads of indices.bin
  double adjacency_hit_rate = 0;  // share of sampled entries the adjacency cache held
  double sample_busy_s = 0, fetch_busy_s = 0, fetch_wait_s = 0, train_busy_s = 0;
  uint64_t max_batches_in_flight = 0;
  uint64_t reads_in_flight_target = 0;
  double device_iops = 0;  // measured by the storage access accumulator
  double read_latency_us = 0;
  uint64_t peak_rss_bytes = 0;
};

struct TrainResult {
  double test_acc = 0;
  double val_acc = 0;
  uint64_t best_epoch = 0;
  double total_time_s = 0;
  std::vector<EpochReport> epochs;
};

// Trains, calling `on_epoch` after each epoch; returns the final model's accuracies.
TrainResult Train(const TrainOptions& options,
                  const std::function<void(const EpochReport&)>& on_epoch = {});

struct EvalResult {
  double val_acc = 0;
  double test_acc = 0;
  uint64_t epoch = 0;  // epochs the checkpoint had completed
};

struct StepBenchResult {
  uint64_t batches = 0;
  double step_ms_median = 0;  // forward + loss + backward + optimizer, features in memory
  double sample_ms_mean = 0;
  double gather_ms_mean = 0;
  double gemm_share = 0;  // of step time
  double gemm_gflops = 0;
  double input_rows_mean = 0;
};

// Times `batches` training steps of epoch 0 one stage at a time (sample, gather, step), so
// each stage's cost is measured alone: what `strata bench step` reports.
StepBenchResult RunStepBench(const TrainOptions& options, uint64_t batches);

// Loads the model of `checkpoint_dir` and measures val/test accuracy with `options`'
// eval_fanouts (empty: full neighbourhoods) and store settings.
EvalResult EvaluateCheckpoint(const TrainOptions& options);

}  // namespace strata
