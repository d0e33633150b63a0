// The table of an epoch's metrics (strata/epoch_report.h). A row's meaning is its line in
// docs/training.md's "Epoch metrics" table, word for word.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "strata/epoch_report.h"

namespace strata {
namespace {

using Group = EpochField::Group;
using Unit = EpochField::Unit;
using R = EpochReport;

double Ratio(double part, double whole) { return whole > 0 ? part / whole : 0.0; }
const MacroBatchStats& Macro(const R& r) { return *r.pipeline.multistage; }

constexpr EpochField kFields[] = {
    {"epoch", "the epoch, from 0", Group::kEvery, Unit::kCount, false, "",
     [](const R& r) -> EpochValue { return r.epoch; }},
    {"time_s", "the epoch's training, evaluation not included", Group::kEvery, Unit::kSeconds,
     false, "", [](const R& r) -> EpochValue { return r.time_s; }},
    {"elapsed_s", "the run's wall clock at the end of the epoch's evaluation, start-up included",
     Group::kEvery, Unit::kSeconds, false, "",
     [](const R& r) -> EpochValue { return r.elapsed_s; }},
    {"train_loss", "mean loss of the epoch's labelled seeds (full graph: of its one step)",
     Group::kEvery, Unit::kNone, false, "loss",
     [](const R& r) -> EpochValue { return r.train_loss; }},
    {"val_acc", "validation accuracy; null when the epoch was not evaluated", Group::kEvery,
     Unit::kFraction, false, "",
     [](const R& r) -> EpochValue {
       if (std::isnan(r.val_acc)) return nullptr;
       return r.val_acc;
     }},
    {"batches", "training steps", Group::kEvery, Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return r.batches; }},
    {"disk_bytes", "read from disk: feature rows, macro-batches, full-graph blocks and scratch",
     Group::kEvery, Unit::kBytes, false, "disk",
     [](const R& r) -> EpochValue { return r.disk_bytes; }},
    {"disk_reads", "read requests of the feature store and the full graph's streams", Group::kEvery,
     Unit::kCount, false, "", [](const R& r) -> EpochValue { return r.disk_reads; }},
    {"disk_rate_bytes_per_s", "disk_bytes / time_s", Group::kEvery, Unit::kPerSecond, false, "",
     [](const R& r) -> EpochValue { return Ratio(r.disk_bytes, r.time_s); }},
    {"hit_rate", "share of distinct requested rows the hot or dynamic cache tier held",
     Group::kEvery, Unit::kFraction, false, "hit rate",
     [](const R& r) -> EpochValue { return r.hit_rate; }},
    {"topology", "where the topology was: memory or disk", Group::kEvery, Unit::kNone, false, "",
     [](const R& r) -> EpochValue {
       return std::string_view(r.topology_on_disk ? "disk" : "memory");
     }},
    {"adjacency_reads", "reads of indices.bin (topology on disk)", Group::kEvery, Unit::kCount,
     false, "", [](const R& r) -> EpochValue { return r.adjacency_reads; }},
    {"adjacency_hit_rate", "share of sampled adjacency entries the adjacency cache held",
     Group::kEvery, Unit::kFraction, false, "",
     [](const R& r) -> EpochValue { return r.adjacency_hit_rate; }},
    {"stage_busy.sample_s", "sampling", Group::kEvery, Unit::kSeconds, true, "",
     [](const R& r) -> EpochValue { return r.pipeline.sample_s; }},
    {"stage_busy.fetch_s", "pinning, planning and submitting gathers", Group::kEvery,
     Unit::kSeconds, true, "", [](const R& r) -> EpochValue { return r.pipeline.fetch_s; }},
    {"stage_busy.fetch_wait_s", "reads still in flight, and decoding their completions",
     Group::kEvery, Unit::kSeconds, true, "",
     [](const R& r) -> EpochValue { return r.pipeline.fetch_wait_s; }},
    {"stage_busy.train_s", "training steps (full graph: the epoch less its stall)", Group::kEvery,
     Unit::kSeconds, false, "", [](const R& r) -> EpochValue { return r.train_busy_s; }},
    {"stall_s", "the consumer waiting for its next input: a batch, or a full-graph block",
     Group::kEvery, Unit::kSeconds, true, "stall",
     [](const R& r) -> EpochValue { return r.stall_s; }},
    {"max_batches_in_flight", "most batches between sampling and training at once", Group::kEvery,
     Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return r.pipeline.max_batches_in_flight; }},
    {"reads_in_flight_target", "the storage access accumulator's last target", Group::kEvery,
     Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return r.pipeline.reads_in_flight_target; }},
    {"device_iops", "reads per second the storage access accumulator measured", Group::kEvery,
     Unit::kPerSecond, true, "", [](const R& r) -> EpochValue { return r.pipeline.device_iops; }},
    {"read_latency_us", "mean latency of the feature store's reads", Group::kEvery,
     Unit::kMicroseconds, true, "",
     [](const R& r) -> EpochValue { return r.pipeline.read_latency_us; }},
    {"peak_rss_bytes", "the process's peak resident set so far", Group::kEvery, Unit::kBytes, false,
     "", [](const R& r) -> EpochValue { return r.peak_rss_bytes; }},
    {"gemm_gflops", "GFLOP/s of the epoch's dense products (GEMM) in training steps", Group::kEvery,
     Unit::kNone, false, "", [](const R& r) -> EpochValue { return r.gemm_gflops; }},
    {"macro_batches", "macro-batches loaded", Group::kMultistage, Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return Macro(r).macro_batches; }},
    {"macro_passes", "sampling passes over them", Group::kMultistage, Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return Macro(r).passes; }},
    {"reuse_mean", "passes per macro-batch", Group::kMultistage, Unit::kNone, true, "",
     [](const R& r) -> EpochValue { return Ratio(Macro(r).passes, Macro(r).macro_batches); }},
    {"load_bytes", "read sequentially into the macro-batch buffers", Group::kMultistage,
     Unit::kBytes, true, "load", [](const R& r) -> EpochValue { return Macro(r).load_bytes; }},
    {"load_busy_s", "reading macro-batches and building their graphs", Group::kMultistage,
     Unit::kSeconds, true, "", [](const R& r) -> EpochValue { return Macro(r).load_busy_s; }},
    {"load_rate_bytes_per_s", "load_bytes / load_busy_s", Group::kMultistage, Unit::kPerSecond,
     true, "",
     [](const R& r) -> EpochValue { return Ratio(Macro(r).load_bytes, Macro(r).load_busy_s); }},
    {"load_wait_s", "the sampler waiting for the loader's next macro-batch", Group::kMultistage,
     Unit::kSeconds, true, "", [](const R& r) -> EpochValue { return Macro(r).load_wait_s; }},
    {"aot_bytes_saved", "feature bytes ahead-of-time sampling did not read", Group::kMultistage,
     Unit::kBytes, true, "", [](const R& r) -> EpochValue { return Macro(r).aot_bytes_saved; }},
    {"halo_nodes", "pbs: halo nodes the mini-batches use, summed over the macro-batches",
     Group::kMultistage, Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return Macro(r).halo_nodes; }},
    {"halo_bytes", "pbs: the halo's feature rows, read through the direct store",
     Group::kMultistage, Unit::kBytes, true, "",
     [](const R& r) -> EpochValue { return Macro(r).halo_bytes; }},
    {"historical_bytes_read", "pbs: historical embeddings read (partitions' and halo's rows)",
     Group::kMultistage, Unit::kBytes, true, "",
     [](const R& r) -> EpochValue { return Macro(r).history_bytes_read; }},
    {"historical_bytes_written", "pbs: historical embeddings written back", Group::kMultistage,
     Unit::kBytes, true, "",
     [](const R& r) -> EpochValue { return Macro(r).history_bytes_written; }},
    {"historical_age_steps", "pbs: mean age of the halo's historical rows used, in steps",
     Group::kMultistage, Unit::kNone, true, "",
     [](const R& r) -> EpochValue { return Macro(r).history_age_steps; }},
    {"historical_never_written", "pbs: halo rows used before any step wrote them (zeros)",
     Group::kMultistage, Unit::kCount, true, "",
     [](const R& r) -> EpochValue { return Macro(r).history_never_written; }},
    {"scratch_bytes_written", "intermediates written to scratch files (their reads: disk_bytes)",
     Group::kFullGraph, Unit::kBytes, false, "",
     [](const R& r) -> EpochValue { return r.full_graph->scratch_bytes_written; }},
    {"ranks", "processes training the model together (mpirun)", Group::kDataParallel, Unit::kCount,
     false, "", [](const R& r) -> EpochValue { return uint64_t{r.data_parallel->ranks}; }},
    {"allreduce_s", "rank 0 packing, starting and waiting for the gradient sums",
     Group::kDataParallel, Unit::kSeconds, false, "allreduce",
     [](const R& r) -> EpochValue { return r.data_parallel->allreduce_s; }},
    {"allreduce_bytes", "gradient bytes each rank contributed", Group::kDataParallel, Unit::kBytes,
     false, "", [](const R& r) -> EpochValue { return r.data_parallel->allreduce_bytes; }},
    {"parameter_hash", "xxh64 of the parameters after the epoch, the same on every rank",
     Group::kDataParallel, Unit::kNone, false, "",
     [](const R& r) -> EpochValue { return std::string_view(r.data_parallel->parameter_hash); }},
};

std::string ProgressValue(const EpochField& field, const EpochValue& value, double time_s) {
  if (const auto* count = std::get_if<uint64_t>(&value)) {
    if (field.unit == Unit::kBytes) return fmt::format("{:.0f} MB/s", Ratio(*count, time_s) / 1e6);
    return fmt::format("{}", *count);
  }
  if (const auto* real = std::get_if<double>(&value)) {
    switch (field.unit) {
      case Unit::kSeconds:
        return fmt::format("{:.1f} s", *real);
      case Unit::kFraction:
        return fmt::format("{:.3f}", *real);
      default:
        return fmt::format("{:.4f}", *real);
    }
  }
  if (const auto* word = std::get_if<std::string_view>(&value)) return std::string(*word);
  return "-";
}

}  // namespace

std::span<const EpochField> EpochFields() { return kFields; }

bool HasField(const EpochReport& report, const EpochField& field) {
  switch (field.group) {
    case Group::kEvery:
      return true;
    case Group::kMultistage:
      return report.pipeline.multistage.has_value();
    case Group::kFullGraph:
      return report.full_graph.has_value();
    case Group::kDataParallel:
      return report.data_parallel.has_value();
  }
  return false;
}

std::string ProgressLine(const EpochReport& report) {
  std::string line;
  for (const EpochField& field : kFields) {
    if (field.progress.empty() || !HasField(report, field)) continue;
    if (!line.empty()) line += ", ";
    line += fmt::format("{} {}", field.progress,
                        ProgressValue(field, field.value(report), report.time_s));
  }
  return line;
}

}  // namespace strata
