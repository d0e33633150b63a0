#include "train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/interrupt.h"
#include "common/progress.h"
#include "common/random.h"
#include "graph/csc_graph.h"
#include "nn/adam.h"
#include "nn/checkpoint.h"
#include "nn/gemm.h"
#include "nn/loss.h"
#include "nn/sgd.h"
#include "sampling/neighbor_sampler.h"
#include "storage/file.h"
#include "strata/error.h"
#include "train/batch_pipeline.h"
#include "train/metrics_log.h"

namespace strata {
namespace {

constexpr uint64_t kEvalBatchSeeds = 1024;
constexpr uint64_t kPresampleBatches = 32;
constexpr uint64_t kPresampleEpoch = uint64_t{1} << 40;  // a stream training never samples
constexpr const char* kCheckpointFile = "checkpoint.bin";

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::vector<int> AllNeighbours(size_t layers) { return std::vector<int>(layers, -1); }

// Where the topology lives: in memory when indptr and indices take at most half the budget
// (or as --topology says), else on disk behind an adjacency cache.
TopologyOptions TopologyOf(const TrainOptions& o, const DatasetMeta& meta) {
  TopologyOptions topology;
  const uint64_t bytes = (meta.num_nodes + 1) * 8 + meta.num_edges * meta.node_id_bytes;
  topology.on_disk =
      o.topology == TrainOptions::Topology::kDisk ||
      (o.topology == TrainOptions::Topology::kAuto && bytes > o.memory_budget_bytes / 2);
  topology.adjacency_cache_bytes = o.adjacency_cache_bytes >= 0
                                       ? static_cast<uint64_t>(o.adjacency_cache_bytes)
                                       : o.memory_budget_bytes / 8;
  topology.io.depth = o.io_depth;
  return topology;
}

// Everything one training or evaluation run holds, in the order it must be built (and
// destroyed in reverse: the pipeline before the store, the store before its buffers).
class Session {
 public:
  // `meta` is the opened dataset's (the caller needed it for the model's shape).
  Session(const TrainOptions& o, const DatasetMeta& meta, const ModelConfig& model_config)
      : o_(o), budget_(o.memory_budget_bytes), meta_(meta) {
    if (meta_.num_classes == 0) throw Error::Input("dataset has no labels", o.dataset);
    if (meta_.feature_dim == 0) throw Error::Input("dataset has no features", o.dataset);
    graph_ = std::make_unique<CscGraph>(o.dataset, meta_, budget_, TopologyOf(o, meta_));
    labels_ = ChargedArray<int32_t>(budget_, meta_.num_nodes, "labels");
    FileReader(o.dataset + "/labels.bin").ReadExact(0, labels_.data(), meta_.num_nodes * 4);
    if (model_config.kind == ModelKind::kGcn) {
      gcn_norm_ = ChargedArray<float>(budget_, meta_.num_nodes, "GCN normalisation");
      for (uint64_t v = 0; v < meta_.num_nodes; ++v) {
        gcn_norm_[v] = static_cast<float>(1.0 / std::sqrt(graph_->InDegree(v) + 1.0));
      }
    }
    train_ids_ = ReadSplit(o.dataset, meta_, "train");
    val_ids_ = ReadSplit(o.dataset, meta_, "val");
    test_ids_ = ReadSplit(o.dataset, meta_, "test");
    sampler_ = std::make_unique<NeighborSampler>(*graph_, train_ids_, o.fanouts, o.batch_size,
                                                 o.seed, budget_, o.threads);
    eval_sampler_ = std::make_unique<NeighborSampler>(
        *graph_, std::vector<uint64_t>{},
        o.eval_fanouts.empty() ? AllNeighbours(o.fanouts.size()) : o.eval_fanouts, kEvalBatchSeeds,
        o.seed, budget_, o.threads);
    model_ = std::make_unique<Model>(model_config);
    OpenStore();
  }

  const DatasetMeta& meta() const { return meta_; }
  Model& model() { return *model_; }
  FeatureStore& store() { return *store_; }
  const std::vector<uint64_t>& val_ids() const { return val_ids_; }
  const std::vector<uint64_t>& test_ids() const { return test_ids_; }
  MemoryBudget& budget() { return budget_; }

  // One optimisation step on a batch whose features have been gathered; returns the loss
  // summed over its labelled seeds and their count.
  std::pair<double, uint64_t> Step(ReadyBatch& ready, uint64_t epoch, Optimizer& opt) {
    const SampledBatch& batch = ready.batch;
    if (o_.row_normalize) NormalizeRows({ready.features.data(), ready.rows * meta_.feature_dim});
    MatrixSpan<const float> features(ready.features.data(), ready.rows, meta_.feature_dim);
    auto logits = model_->Forward(batch.blocks, features, NormOf(batch.input_nodes()), true,
                                  MixSeed(o_.seed, (epoch << 32) | batch.index));
    SeedLabels(batch);
    grad_.Resize(logits.rows(), logits.cols());
    LossResult loss = SoftmaxCrossEntropy<float>(logits, seed_labels_, grad_.span());
    model_->Backward(grad_.span());
    opt.Step();
    ChargeModelMemory();
    return {loss.loss * loss.labelled, loss.labelled};
  }

  // Accuracy on `ids` with the evaluation fanouts (full neighbourhoods by default).
  AccuracyCount Evaluate(const std::vector<uint64_t>& ids) {
    EvalBatch scratch{{}, TrackedCharge(budget_, "evaluation batch features")};
    AccuracyCount total;
    for (uint64_t first = 0; first < ids.size(); first += kEvalBatchSeeds) {
      std::span<const uint64_t> seeds(ids.data() + first,
                                      std::min<uint64_t>(kEvalBatchSeeds, ids.size() - first));
      EvaluateSeeds(seeds, first / kEvalBatchSeeds, scratch, total);
    }
    return total;
  }

  const NeighborSampler& sampler() const { return *sampler_; }
  const CscGraph& graph() const { return *graph_; }

 private:
  struct EvalBatch {
    std::vector<float> features;
    TrackedCharge charge;
  };

  // Evaluates `seeds` as one batch when its input features and activations fit what the
  // budget leaves, else as two halves, recursively: full neighbourhoods grow fast with the
  // seed count. Splitting changes no prediction, since a node's sampled neighbours depend
  // on its id and the stream, not on the batch it is in.
  void EvaluateSeeds(std::span<const uint64_t> seeds, uint64_t stream, EvalBatch& scratch,
                     AccuracyCount& total) {
    SampledBatch batch = o_.eval_fanouts.empty() ? eval_sampler_->SampleFullNeighborhood(seeds)
                                                 : eval_sampler_->SampleSeeds(seeds, stream);
    const auto& inputs = batch.input_nodes();
    const uint64_t width = std::max<uint64_t>(
        meta_.feature_dim, o_.hidden * (o_.model == ModelKind::kGat ? o_.heads : 1));
    const uint64_t feature_bytes = inputs.size() * meta_.feature_dim * sizeof(float);
    const uint64_t activation_bytes = 2 * inputs.size() * width * sizeof(float);
    const uint64_t need = feature_bytes + activation_bytes;
    const uint64_t have = budget_.available() + scratch.charge.bytes() + model_memory_.bytes();
    if (need > have && seeds.size() > 1) {
      const size_t half = seeds.size() / 2;
      EvaluateSeeds(seeds.first(half), stream, scratch, total);
      EvaluateSeeds(seeds.subspan(half), stream, scratch, total);
      return;
    }
    if (o_.eval_fanouts.empty() && seeds.size() == 1 && feature_bytes > have) {
      throw Error::Input(fmt::format(
          "evaluating node {} with its full {}-hop neighbourhood needs {} of input features, "
          "more than the memory budget leaves ({}); raise --memory-budget or sample "
          "evaluation neighbourhoods with --eval-fanouts",
          seeds[0], o_.fanouts.size(), FormatBytes(feature_bytes), FormatBytes(have)));
    }
    scratch.charge.Update(feature_bytes);
    scratch.features.resize(inputs.size() * meta_.feature_dim);
    store_->Gather(inputs, scratch.features);
    if (o_.row_normalize) NormalizeRows(scratch.features);
    MatrixSpan<const float> x(scratch.features.data(), inputs.size(), meta_.feature_dim);
    auto logits = model_->Forward(batch.blocks, x, NormOf(inputs), false, 0);
    SeedLabels(batch);
    ChargeModelMemory();
    AccuracyCount count = CountCorrect(logits, seed_labels_);
    total.correct += count.correct;
    total.labelled += count.labelled;
    ThrowIfInterrupted();
  }

  // The model's buffers grow with the largest batch it has seen; the budget follows them
  // (OpenStore left room for them when it sized the cache).
  void ChargeModelMemory() {
    model_memory_.Update(model_->AllocatedBytes() + grad_.capacity() * sizeof(float));
  }

  // Divides each row by its L1 norm; all-zero rows stay zero.
  void NormalizeRows(std::span<float> rows) {
    const uint64_t dim = meta_.feature_dim;
    for (size_t start = 0; start < rows.size(); start += dim) {
      double sum = 0;
      for (uint64_t k = 0; k < dim; ++k) sum += std::fabs(rows[start + k]);
      if (sum == 0) continue;
      const float scale = static_cast<float>(1.0 / sum);
      for (uint64_t k = 0; k < dim; ++k) rows[start + k] *= scale;
    }
  }

  std::span<const float> NormOf(const std::vector<uint64_t>& nodes) {
    if (gcn_norm_.size() == 0) return {};
    norm_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) norm_[i] = gcn_norm_[nodes[i]];
    return norm_;
  }

  void SeedLabels(const SampledBatch& batch) {
    const Block& last = batch.blocks.back();
    seed_labels_.resize(last.num_dst());
    for (uint32_t i = 0; i < last.num_dst(); ++i) seed_labels_[i] = labels_[last.src_nodes[i]];
  }

  // Sizes the cache from what the budget leaves once batches in flight are provided for.
  void OpenStore() {
    DirectStoreOptions direct;
    direct.io.depth = o_.io_depth;
    direct.max_read_bytes = o_.max_read_bytes;
    direct.policy = o_.cache_policy;
    if (o_.store == FeatureStoreKind::kDirect) {
      uint64_t widest = 0;
      for (uint64_t b = 0; b < std::min<uint64_t>(3, sampler_->batches_per_epoch()); ++b) {
        widest = std::max<uint64_t>(widest, sampler_->Sample(0, b).input_nodes().size());
      }
      const uint64_t row_bytes = meta_.feature_dim * FeatureDtypeBytes(meta_.feature_dtype);
      // Batches in flight (features, and about four times that in activations and gradients,
      // which the model charges as it allocates them: ChargeModelMemory)
      // plus the store's read buffers.
      const uint64_t reserve = (o_.max_run_ahead + 2) * widest * meta_.feature_dim * 4 +
                               4 * widest * std::max<uint64_t>(meta_.feature_dim, o_.hidden) * 4 +
                               uint64_t{o_.io_depth} * o_.max_read_bytes;
      const uint64_t feature_bytes = meta_.num_nodes * row_bytes;
      uint64_t cache_bytes =
          o_.cache_fraction >= 0
              ? static_cast<uint64_t>(o_.cache_fraction * feature_bytes)
              : (budget_.available() > reserve ? (budget_.available() - reserve) / 2 : 0);
      cache_bytes = std::min(cache_bytes, feature_bytes);
      const uint64_t cache_rows = cache_bytes / std::max<uint64_t>(row_bytes, 1);
      const uint64_t hot_rows = static_cast<uint64_t>(cache_rows * o_.hot_share);
      direct.dynamic_rows = cache_rows - hot_rows;
      direct.max_pinned_ids = std::min<uint64_t>(
          meta_.num_nodes, 2 * (uint64_t{o_.max_run_ahead} + 1) * std::max<uint64_t>(widest, 1));
      if (direct.dynamic_rows == 0) direct.max_pinned_ids = 0;
      if (hot_rows > 0) direct.hot_ids = HotIds(hot_rows);
    }
    store_ = OpenFeatureStore(o_.dataset, meta_, o_.store, direct, budget_);
  }

  std::vector<uint64_t> HotIds(uint64_t count) {
    const uint64_t presample_batches = std::min(kPresampleBatches, sampler_->batches_per_epoch());
    ChargedArray<float> scores = HotnessScores(
        o_.hot_policy, *graph_, train_ids_,
        [&](uint64_t b) { return sampler_->Sample(kPresampleEpoch, b).input_nodes(); },
        presample_batches, budget_);
    return TopScored(scores, count, budget_);
  }

  TrainOptions o_;
  MemoryBudget budget_;
  DatasetMeta meta_;
  std::unique_ptr<CscGraph> graph_;
  ChargedArray<int32_t> labels_;
  ChargedArray<float> gcn_norm_;
  std::vector<uint64_t> train_ids_, val_ids_, test_ids_;
  std::unique_ptr<NeighborSampler> sampler_;
  std::unique_ptr<NeighborSampler> eval_sampler_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<FeatureStore> store_;
  std::vector<float> norm_;
  std::vector<int32_t> seed_labels_;
  Matrix grad_;
  TrackedCharge model_memory_{budget_, "model activations and gradients"};
};

ModelConfig ModelConfigOf(const TrainOptions& o, const DatasetMeta& meta) {
  ModelConfig config;
  config.kind = o.model;
  config.in_dim = meta.feature_dim;
  config.hidden = o.hidden;
  config.num_classes = meta.num_classes;
  config.layers = o.layers;
  config.dropout = o.dropout;
  config.input_dropout = o.input_dropout;
  config.attention_dropout = o.attention_dropout;
  config.heads = o.heads;
  config.out_heads = o.out_heads;
  config.seed = o.seed;
  config.threads = o.threads;
  return config;
}

nlohmann::ordered_json CheckpointMetadata(const TrainOptions& o, const ModelConfig& c,
                                          uint64_t epochs_done) {
  return {{"epochs_done", epochs_done}, {"model", std::string(ModelKindName(c.kind))},
          {"layers", c.layers},         {"hidden", c.hidden},
          {"heads", c.heads},           {"out_heads", c.out_heads},
          {"in_dim", c.in_dim},         {"num_classes", c.num_classes},
          {"optimizer", o.optimizer}};
}

std::unique_ptr<Optimizer> MakeOptimizer(const TrainOptions& o, Model& model) {
  if (o.optimizer == "sgd") {
    return std::make_unique<Sgd>(model.Parameters(), SgdOptions{o.lr, 0.9, o.weight_decay});
  }
  if (o.optimizer != "adam") throw Error::Input("--optimizer must be adam or sgd");
  AdamOptions adam;
  adam.lr = o.lr;
  adam.weight_decay = o.weight_decay;
  return std::make_unique<Adam>(model.Parameters(), adam);
}

AdjacencyStats AdjacencyStatsOf(const CscGraph& graph) {
  return graph.adjacency() ? graph.adjacency()->stats() : AdjacencyStats{};
}

void CheckOptions(const TrainOptions& o) {
  if (o.layers == 0 || o.fanouts.size() != o.layers) {
    throw Error::Input(
        fmt::format("--fanouts lists {} layers, --layers is {}", o.fanouts.size(), o.layers));
  }
  if (!o.eval_fanouts.empty() && o.eval_fanouts.size() != o.layers) {
    throw Error::Input("--eval-fanouts must list one fanout per layer");
  }
  if (o.batch_size == 0) throw Error::Input("--batch-size must be positive");
  if (o.hidden == 0) throw Error::Input("--hidden must be positive");
  if (!(o.lr > 0)) throw Error::Input("--lr must be positive");
  if (!(o.dropout >= 0 && o.dropout < 1)) throw Error::Input("--dropout must be in [0, 1)");
}

}  // namespace

TrainResult Train(const TrainOptions& o, const std::function<void(const EpochReport&)>& on_epoch) {
  CheckOptions(o);
  const auto start = std::chrono::steady_clock::now();
  const DatasetMeta meta = OpenDataset(o.dataset);
  const ModelConfig config = ModelConfigOf(o, meta);
  Session session(o, meta, config);
  auto optimizer = MakeOptimizer(o, session.model());
  MetricsLog metrics(o.metrics_out);
  std::string checkpoint_path;
  uint64_t first_epoch = 0;
  if (!o.checkpoint_dir.empty()) {
    std::filesystem::create_directories(o.checkpoint_dir);
    checkpoint_path = o.checkpoint_dir + "/" + kCheckpointFile;
    if (o.resume && std::filesystem::exists(checkpoint_path)) {
      auto params = session.model().Parameters();
      std::string text = ReadCheckpointFile(checkpoint_path, params, optimizer.get());
      first_epoch = nlohmann::json::parse(text).at("epochs_done").get<uint64_t>();
    }
  } else if (o.resume) {
    throw Error::Input("--resume needs --checkpoint DIR");
  }

  TrainResult result;
  double best_val = -1;
  std::unique_ptr<ProgressBar> progress;
  if (o.progress) progress = std::make_unique<ProgressBar>("training", 0);
  const NeighborSampler& sampler = session.sampler();
  for (uint64_t epoch = first_epoch; epoch < o.epochs; ++epoch) {
    const auto epoch_start = std::chrono::steady_clock::now();
    const FeatureStoreStats before = session.store().stats();
    const AdjacencyStats adjacency_before = AdjacencyStatsOf(session.graph());
    EpochReport report;
    report.epoch = epoch;
    double loss_sum = 0;
    uint64_t labelled = 0;
    double train_s = 0;
    if (progress) progress->Restart(fmt::format("epoch {}", epoch), sampler.batches_per_epoch());
    {
      PipelineOptions pipeline_options;
      pipeline_options.epoch = epoch;
      pipeline_options.max_run_ahead = o.max_run_ahead;
      pipeline_options.max_reads_in_flight = o.io_depth;
      BatchPipeline pipeline(sampler, session.store(), pipeline_options, session.budget());
      while (std::optional<ReadyBatch> ready = pipeline.Next()) {
        const auto step_start = std::chrono::steady_clock::now();
        auto [loss, count] = session.Step(*ready, epoch, *optimizer);
        train_s += Seconds(step_start);
        loss_sum += loss;
        labelled += count;
        ++report.batches;
        ThrowIfInterrupted();
        if (progress || (o.log_every && report.batches % o.log_every == 0)) {
          const FeatureStoreStats now = pipeline.store_stats();
          const double elapsed = Seconds(epoch_start);
          std::string status =
              fmt::format("loss {:.4f}, {:.1f} batches/s, disk {:.0f} MB/s, hit rate {:.3f}",
                          labelled ? loss_sum / labelled : 0.0, report.batches / elapsed,
                          (now.bytes_read - before.bytes_read) / elapsed / 1e6, now.hit_rate());
          if (progress) {
            progress->set_suffix(status);
            progress->Update(report.batches);
          }
          if (o.log_every && report.batches % o.log_every == 0) {
            fmt::print(stderr, "epoch {} batch {}/{}: {}\n", epoch, report.batches,
                       sampler.batches_per_epoch(), status);
          }
        }
      }
      const StageBusy busy = pipeline.busy();
      report.sample_busy_s = busy.sample_s;
      report.fetch_busy_s = busy.fetch_s;
      report.fetch_wait_s = busy.fetch_wait_s;
      report.max_batches_in_flight = busy.max_batches_in_flight;
      report.reads_in_flight_target = busy.reads_in_flight_target;
      report.device_iops = busy.peak_iops;
      report.read_latency_us = busy.read_latency_us;
    }
    if (progress) progress->Finish();
    report.train_busy_s = train_s;
    report.train_loss = labelled ? loss_sum / labelled : 0;
    const FeatureStoreStats after = session.store().stats();
    report.disk_bytes = after.bytes_read - before.bytes_read;
    report.disk_reads = after.reads - before.reads;
    const uint64_t unique = after.rows_unique - before.rows_unique;
    const uint64_t hits =
        after.hot_hits + after.dynamic_hits - before.hot_hits - before.dynamic_hits;
    report.hit_rate = unique ? static_cast<double>(hits) / unique : 0;
    const AdjacencyStats adjacency_after = AdjacencyStatsOf(session.graph());
    report.adjacency_reads = adjacency_after.reads - adjacency_before.reads;
    const uint64_t entries = adjacency_after.entries - adjacency_before.entries;
    report.adjacency_hit_rate =
        entries ? static_cast<double>(adjacency_after.cache_hits - adjacency_before.cache_hits) /
                      entries
                : 0;
    report.time_s = Seconds(epoch_start);
    const bool last = epoch + 1 == o.epochs;
    if (last || (o.eval_every && (epoch + 1) % o.eval_every == 0)) {
      report.val_acc = session.Evaluate(session.val_ids()).accuracy();
      if (report.val_acc > best_val) {
        best_val = report.val_acc;
        result.best_epoch = epoch;
      }
    }
    report.peak_rss_bytes = PeakRssBytes();
    if (!checkpoint_path.empty()) {
      auto params = session.model().Parameters();
      WriteCheckpointFile(checkpoint_path, params, optimizer.get(),
                          CheckpointMetadata(o, config, epoch + 1).dump());
    }
    nlohmann::ordered_json record = {
        {"event", "epoch"},
        {"epoch", epoch},
        {"time_s", report.time_s},
        {"train_loss", report.train_loss},
        {"val_acc", nullptr},
        {"batches", report.batches},
        {"disk_bytes", report.disk_bytes},
        {"disk_reads", report.disk_reads},
        {"hit_rate", report.hit_rate},
        {"topology", session.graph().indices_resident() ? "memory" : "disk"},
        {"adjacency_reads", report.adjacency_reads},
        {"adjacency_hit_rate", report.adjacency_hit_rate},
        {"stage_busy",
         {{"sample_s", report.sample_busy_s},
          {"fetch_s", report.fetch_busy_s},
          {"fetch_wait_s", report.fetch_wait_s},
          {"train_s", report.train_busy_s}}},
        {"max_batches_in_flight", report.max_batches_in_flight},
        {"reads_in_flight_target", report.reads_in_flight_target},
        {"device_iops", report.device_iops},
        {"read_latency_us", report.read_latency_us},
        {"peak_rss_bytes", report.peak_rss_bytes}};
    if (!std::isnan(report.val_acc)) record["val_acc"] = report.val_acc;
    metrics.Append(record);
    result.epochs.push_back(report);
    if (on_epoch) on_epoch(report);
  }
  result.val_acc = session.Evaluate(session.val_ids()).accuracy();
  result.test_acc = session.Evaluate(session.test_ids()).accuracy();
  result.total_time_s = Seconds(start);
  metrics.Append({{"event", "final"},
                  {"test_acc", result.test_acc},
                  {"val_acc", result.val_acc},
                  {"best_epoch", result.best_epoch},
                  {"total_time_s", result.total_time_s},
                  {"peak_rss_bytes", PeakRssBytes()},
                  {"memory_budget_bytes", o.memory_budget_bytes}});
  return result;
}

StepBenchResult RunStepBench(const TrainOptions& o, uint64_t batches) {
  CheckOptions(o);
  const DatasetMeta meta = OpenDataset(o.dataset);
  const ModelConfig config = ModelConfigOf(o, meta);
  Session session(o, meta, config);
  auto optimizer = MakeOptimizer(o, session.model());
  const NeighborSampler& sampler = session.sampler();
  batches = std::min(batches, sampler.batches_per_epoch());
  std::vector<double> step_ms;
  double sample_ms = 0, gather_ms = 0, rows = 0, gemm_s = 0;
  uint64_t gemm_flops = 0;
  for (uint64_t b = 0; b < batches; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    ReadyBatch ready;
    ready.batch = sampler.Sample(0, b);
    auto t1 = std::chrono::steady_clock::now();
    ready.rows = ready.batch.input_nodes().size();
    ready.features = ChargedArray<float>(session.budget(), ready.rows * meta.feature_dim,
                                         "batch input features");
    session.store().Gather(ready.batch.input_nodes(),
                           {ready.features.data(), ready.rows * meta.feature_dim});
    auto t2 = std::chrono::steady_clock::now();
    ResetGemmCounters();
    session.Step(ready, 0, *optimizer);
    const GemmCounters gemm = ReadGemmCounters();
    const double step_s = Seconds(t2);
    // The first step grows every buffer; it is timed apart from the steady state.
    if (b > 0 || batches == 1) {
      step_ms.push_back(step_s * 1e3);
      gemm_s += gemm.seconds;
      gemm_flops += gemm.flops;
    }
    sample_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
    gather_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
    rows += ready.rows;
    ThrowIfInterrupted();
  }
  StepBenchResult result;
  result.batches = batches;
  if (batches == 0) return result;
  std::vector<double> sorted = step_ms;
  std::sort(sorted.begin(), sorted.end());
  result.step_ms_median = sorted[sorted.size() / 2];
  double step_total_s = 0;
  for (double ms : step_ms) step_total_s += ms / 1e3;
  result.gemm_share = step_total_s > 0 ? gemm_s / step_total_s : 0;
  result.gemm_gflops = gemm_s > 0 ? gemm_flops / gemm_s / 1e9 : 0;
  result.sample_ms_mean = sample_ms / batches;
  result.gather_ms_mean = gather_ms / batches;
  result.input_rows_mean = rows / batches;
  return result;
}

EvalResult EvaluateCheckpoint(const TrainOptions& options) {
  TrainOptions o = options;
  const std::string path = o.checkpoint_dir + "/" + kCheckpointFile;
  if (!std::filesystem::exists(path)) throw Error::Input("no checkpoint found", path);
  nlohmann::json meta_json = nlohmann::json::parse(ReadCheckpointMetadata(path));
  o.model = ParseModelKind(meta_json.at("model").get<std::string>());
  o.layers = meta_json.at("layers").get<size_t>();
  o.hidden = meta_json.at("hidden").get<size_t>();
  o.heads = meta_json.at("heads").get<size_t>();
  o.out_heads = meta_json.at("out_heads").get<size_t>();
  if (o.fanouts.size() != o.layers) o.fanouts = AllNeighbours(o.layers);
  CheckOptions(o);
  const DatasetMeta meta = OpenDataset(o.dataset);
  const ModelConfig config = ModelConfigOf(o, meta);
  if (meta_json.at("in_dim").get<size_t>() != config.in_dim ||
      meta_json.at("num_classes").get<size_t>() != config.num_classes) {
    throw Error::Input("the checkpoint was trained on a dataset of another shape", path);
  }
  Session session(o, meta, config);
  auto params = session.model().Parameters();
  ReadCheckpointFile(path, params, nullptr);
  EvalResult result;
  result.epoch = meta_json.at("epochs_done").get<uint64_t>();
  result.val_acc = session.Evaluate(session.val_ids()).accuracy();
  result.test_acc = session.Evaluate(session.test_ids()).accuracy();
  return result;
}

}  // namespace strata
