// The metrics log's records (docs/training.md, "Epoch metrics"): the fields scripts read keep
// their names and order (new ones may join), val_acc is null until evaluated, the multistage
// and full-graph groups come only on their paths, and the final record's fields.
#include "train/epoch_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace strata {
namespace {

std::vector<std::string> Keys(const nlohmann::ordered_json& record) {
  std::vector<std::string> keys;
  for (const auto& item : record.items()) keys.push_back(item.key());
  return keys;
}

// Whether `names` appear in `keys` in this order, other keys between them allowed.
bool InOrder(const std::vector<std::string>& keys, const std::vector<std::string>& names) {
  auto key = keys.begin();
  for (const std::string& name : names) {
    key = std::find(key, keys.end(), name);
    if (key == keys.end()) return false;
  }
  return true;
}

// The top-level keys of a mini-batch epoch's record that scripts read, in their order.
const std::vector<std::string> kEpochFields = {"event",
                                               "epoch",
                                               "time_s",
                                               "train_loss",
                                               "val_acc",
                                               "batches",
                                               "disk_bytes",
                                               "disk_reads",
                                               "hit_rate",
                                               "topology",
                                               "adjacency_reads",
                                               "adjacency_hit_rate",
                                               "stage_busy",
                                               "stall_s",
                                               "max_batches_in_flight",
                                               "reads_in_flight_target",
                                               "device_iops",
                                               "read_latency_us",
                                               "peak_rss_bytes",
                                               "gemm_gflops"};

TEST(EpochRecord, AMiniBatchEpochsFieldsInOrder) {
  EpochReport r;
  r.epoch = 3;
  r.train_loss = 1.25;
  r.pipeline.sample_s = 2;
  const nlohmann::ordered_json record = EpochRecord(r);
  EXPECT_TRUE(InOrder(Keys(record), kEpochFields));
  EXPECT_EQ(record["event"], "epoch");
  EXPECT_EQ(record["epoch"], 3);
  EXPECT_TRUE(record["val_acc"].is_null());
  EXPECT_EQ(record["topology"], "memory");
  EXPECT_TRUE(
      InOrder(Keys(record["stage_busy"]), {"sample_s", "fetch_s", "fetch_wait_s", "train_s"}));
  EXPECT_FALSE(record.contains("macro_batches"));
  EXPECT_FALSE(record.contains("scratch_bytes_written"));
  EXPECT_EQ(record["stage_busy"]["sample_s"], 2.0);

  r.val_acc = 0.75;
  r.topology_on_disk = true;
  const nlohmann::ordered_json evaluated = EpochRecord(r);
  EXPECT_TRUE(InOrder(Keys(evaluated), kEpochFields));
  EXPECT_EQ(evaluated["val_acc"], 0.75);
  EXPECT_EQ(evaluated["topology"], "disk");
}

TEST(EpochRecord, MultistageAndFullGraphAppendTheirGroups) {
  EpochReport r;
  r.stall_s = 1.5;
  MacroBatchStats& macro = r.pipeline.multistage.emplace();
  macro.macro_batches = 4;
  macro.passes = 6;
  macro.load_bytes = 1000;
  macro.load_busy_s = 4;
  macro.load_wait_s = 0.5;
  nlohmann::ordered_json record = EpochRecord(r);
  std::vector<std::string> multistage = kEpochFields;
  for (const char* key : {"macro_batches", "macro_passes", "reuse_mean", "load_bytes",
                          "load_busy_s", "load_rate_bytes_per_s", "load_wait_s"}) {
    multistage.push_back(key);
  }
  EXPECT_TRUE(InOrder(Keys(record), multistage));
  EXPECT_EQ(record["reuse_mean"], 1.5);
  EXPECT_EQ(record["load_rate_bytes_per_s"], 250.0);
  EXPECT_EQ(record["stall_s"], 1.5);
  EXPECT_EQ(record["load_wait_s"], 0.5);
  macro.load_busy_s = 0;
  EXPECT_EQ(EpochRecord(r)["load_rate_bytes_per_s"], 0.0);

  EpochReport full;
  full.stall_s = 2;
  full.full_graph = FullGraphStats{4096};
  std::vector<std::string> full_graph = kEpochFields;
  full_graph.push_back("scratch_bytes_written");
  record = EpochRecord(full);
  EXPECT_TRUE(InOrder(Keys(record), full_graph));
  EXPECT_FALSE(record.contains("macro_batches"));
  EXPECT_EQ(record["stall_s"], 2.0);
  EXPECT_EQ(record["scratch_bytes_written"], 4096);
}

TEST(FinalRecord, FieldsInOrderAndNotEvaluatedAccuraciesAsNull) {
  TrainResult result;
  result.test_acc = 0.5;
  result.val_acc = std::nan("");
  result.best_epoch = 2;
  result.blas_core = "Cooperlake";
  result.stopped_by = StopReason::kPatience;
  const nlohmann::ordered_json record = FinalRecord(result, EvalPoint::kBest, 100, 200, 150);
  EXPECT_EQ(Keys(record),
            (std::vector<std::string>{
                "event", "test_acc", "val_acc", "eval_point", "final_test_acc", "final_val_acc",
                "best_epoch", "best_val_acc", "best_test_acc", "total_time_s", "stopped_by",
                "blas_core", "peak_rss_bytes", "memory_budget_bytes", "budget_peak_bytes"}));
  EXPECT_EQ(record["event"], "final");
  EXPECT_EQ(record["eval_point"], "best");
  EXPECT_EQ(record["best_epoch"], 2);
  EXPECT_EQ(record["blas_core"], "Cooperlake");
  EXPECT_EQ(record["stopped_by"], "patience");
  EXPECT_EQ(record["budget_peak_bytes"], 150);
  // NaN is written as null, as scripts expect of an accuracy not measured.
  const nlohmann::json line = nlohmann::json::parse(record.dump());
  EXPECT_TRUE(line["val_acc"].is_null());
  EXPECT_EQ(line["test_acc"], 0.5);
}

}  // namespace
}  // namespace strata
