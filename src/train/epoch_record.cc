#include "train/epoch_record.h"

#include <cmath>

namespace strata {

nlohmann::ordered_json EpochRecord(const EpochReport& r) {
  nlohmann::ordered_json record = {{"event", "epoch"},
                                   {"epoch", r.epoch},
                                   {"time_s", r.time_s},
                                   {"train_loss", r.train_loss},
                                   {"val_acc", nullptr},
                                   {"batches", r.batches},
                                   {"disk_bytes", r.disk_bytes},
                                   {"disk_reads", r.disk_reads},
                                   {"hit_rate", r.hit_rate},
                                   {"topology", r.topology_on_disk ? "disk" : "memory"},
                                   {"adjacency_reads", r.adjacency_reads},
                                   {"adjacency_hit_rate", r.adjacency_hit_rate},
                                   {"stage_busy",
                                    {{"sample_s", r.sample_busy_s},
                                     {"fetch_s", r.fetch_busy_s},
                                     {"fetch_wait_s", r.fetch_wait_s},
                                     {"train_s", r.train_busy_s}}},
                                   {"max_batches_in_flight", r.max_batches_in_flight},
                                   {"reads_in_flight_target", r.reads_in_flight_target},
                                   {"device_iops", r.device_iops},
                                   {"read_latency_us", r.read_latency_us},
                                   {"peak_rss_bytes", r.peak_rss_bytes},
                                   {"gemm_gflops", r.gemm_gflops}};
  if (!std::isnan(r.val_acc)) record["val_acc"] = r.val_acc;
  if (r.macro_batches > 0) {
    record["macro_batches"] = r.macro_batches;
    record["reuse_mean"] = r.reuse_mean;
    record["load_bytes"] = r.load_bytes;
    record["load_busy_s"] = r.load_busy_s;
    record["load_rate_bytes_per_s"] = r.load_busy_s > 0 ? r.load_bytes / r.load_busy_s : 0.0;
    record["stall_s"] = r.stall_s;
  }
  if (r.full_graph) {
    record["stall_s"] = r.stall_s;
    record["scratch_bytes_written"] = r.scratch_bytes_written;
  }
  return record;
}

nlohmann::ordered_json FinalRecord(const TrainResult& result, EvalPoint eval_point,
                                   uint64_t peak_rss_bytes, uint64_t memory_budget_bytes,
                                   uint64_t budget_peak_bytes) {
  return {{"event", "final"},
          {"test_acc", result.test_acc},
          {"val_acc", result.val_acc},
          {"eval_point", std::string(EvalPointName(eval_point))},
          {"final_test_acc", result.final_test_acc},
          {"final_val_acc", result.final_val_acc},
          {"best_epoch", result.best_epoch},
          {"best_val_acc", result.best_val_acc},
          {"best_test_acc", result.best_test_acc},
          {"total_time_s", result.total_time_s},
          {"blas_core", result.blas_core},
          {"peak_rss_bytes", peak_rss_bytes},
          {"memory_budget_bytes", memory_budget_bytes},
          {"budget_peak_bytes", budget_peak_bytes}};
}

}  // namespace strata
