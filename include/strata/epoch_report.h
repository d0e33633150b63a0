// EpochReport is what one training epoch measured, whichever path ran it; EpochFields() is the
// one table of its metrics. The --metrics-out record, a Python loader's stats()["epoch"], the
// progress line and the table in docs/training.md ("Epoch metrics") are all made from the
// table, so a new metric is one member here, one row in the table and one row in the docs (a
// test holds the docs to the table).
//
// Groups: every path fills the top-level members; the sampled paths' batch streams fill
// `pipeline` (zero on the full graph); `pipeline.multistage`, `full_graph` and `data_parallel`
// are set only on their paths, and only then are their fields in the record.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata {

// A macro-batch stream's loader and its passes over the macro-batches.
struct MacroBatchStats {
  uint64_t planned = 0;  // macro-batches the epoch plans; for progress, not recorded
  uint64_t macro_batches = 0;
  uint64_t passes = 0;  // sampling passes over them (adaptive reuse: more than one each)
  uint64_t load_bytes = 0;
  double load_busy_s = 0;
  double load_wait_s = 0;
  uint64_t aot_bytes_saved = 0;  // feature bytes ahead-of-time sampling did not read
  // Partition-based sampling.
  uint64_t halo_nodes = 0;             // summed over the macro-batches
  uint64_t halo_bytes = 0;             // their feature rows, read through the direct store
  uint64_t history_bytes_read = 0;     // historical rows: partitions' and halo's
  uint64_t history_bytes_written = 0;  // the partitions' rows written back
  double history_age_steps = 0;        // mean age of the halo rows used, in steps
  uint64_t history_never_written = 0;  // halo rows used before any step wrote them (zeros)
};

// What a batch stream's stages did: seconds working (not waiting) and how its reads went.
struct PipelineStats {
  double sample_s = 0;
  double fetch_s = 0;
  double fetch_wait_s = 0;
  uint64_t max_batches_in_flight = 0;
  uint64_t reads_in_flight_target = 0;
  double device_iops = 0;
  double read_latency_us = 0;
  std::optional<MacroBatchStats> multistage;
};

struct FullGraphStats {
  uint64_t scratch_bytes_written = 0;
};

// A data-parallel run's ranks (`mpirun -np N strata train`): rank 0's record says how the
// exchange went, and lists every rank's stage times.
struct RankTimes {
  double time_s = 0;
  double stall_s = 0;
  double train_busy_s = 0;
  double sample_s = 0;
  double fetch_s = 0;
  double allreduce_s = 0;
};
struct DataParallelStats {
  uint32_t ranks = 0;
  double allreduce_s = 0;        // this rank's time packing, starting and waiting for the sums
  uint64_t allreduce_bytes = 0;  // each rank's contribution over the epoch
  std::string parameter_hash;    // xxh64 of the parameters after the epoch, equal on every rank
  std::vector<RankTimes> rank_times;  // by rank
};

struct EpochReport {
  uint64_t epoch = 0;
  double time_s = 0;
  // The run's wall clock when this epoch's evaluation ended: seconds since training started,
  // start-up and every earlier epoch and evaluation included (the time-to-accuracy axis).
  double elapsed_s = 0;
  double train_loss = 0;
  double val_acc = std::numeric_limits<double>::quiet_NaN();  // NaN when not evaluated
  uint64_t batches = 0;
  uint64_t disk_bytes = 0;
  uint64_t disk_reads = 0;
  double hit_rate = 0;
  bool topology_on_disk = false;
  uint64_t adjacency_reads = 0;
  double adjacency_hit_rate = 0;
  PipelineStats pipeline;
  double train_busy_s = 0;
  // The one wait every path reports: the consumer of the data (the training step, or a
  // Python loop) waiting for its next input — a batch, or on the full graph a block of rows.
  double stall_s = 0;
  uint64_t peak_rss_bytes = 0;
  double gemm_gflops = 0;
  std::optional<FullGraphStats> full_graph;
  std::optional<DataParallelStats> data_parallel;
};

// A metric's value as recorded: null, a count, a real or a word.
using EpochValue = std::variant<std::nullptr_t, uint64_t, double, std::string_view>;

struct EpochField {
  enum class Group { kEvery, kMultistage, kFullGraph, kDataParallel };
  // How the value reads: in the docs table, and on the progress line (bytes as MB/s).
  enum class Unit { kNone, kCount, kSeconds, kBytes, kFraction, kPerSecond, kMicroseconds };

  std::string_view key;  // in the metrics record; "a.b" is member b of object a
  std::string_view meaning;
  Group group;
  Unit unit;
  bool loader;                // also in a Python loader's stats()["epoch"], under b of "a.b"
  std::string_view progress;  // its label on the progress line; empty: not shown there
  EpochValue (*value)(const EpochReport&);
};

// Every metric, in the record's order.
std::span<const EpochField> EpochFields();

// Whether `field` belongs in `report`'s record: its group is every path's or was set.
bool HasField(const EpochReport& report, const EpochField& field);

// "loss 1.2345, disk 120 MB/s, ...": the progress-labelled fields `report` has, with bytes as
// a rate over report.time_s.
std::string ProgressLine(const EpochReport& report);

}  // namespace strata
