// `strata train` and `strata eval` end to end: the metrics file's events and fields, the
// topology placements giving the same losses, a checkpoint evaluated, and bad options refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::CommandResult;
using testing::ExpectInputError;
using testing::ReadJsonLines;
using testing::RunStrata;
using testing::ScratchDir;

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override { GenerateDataset(testing::SmallGraph(dir_ / "g", 3000, 32, 4, 6, 3)); }
  std::vector<std::string> Args(const std::string& metrics) const {
    return {"train",      dir_ / "g", "--fanouts",     "5,5",  "--hidden",        "16",
            "--epochs",   "2",        "--batch-size",  "64",   "--memory-budget", "64M",
            "--io-depth", "32",       "--metrics-out", metrics};
  }
  ScratchDir dir_;
};

TEST_F(TrainCli, MetricsHaveEveryFieldAndTopologyOnDiskChangesNoLoss) {
  CommandResult memory = RunStrata(Args(dir_ / "m.jsonl"));
  ASSERT_EQ(memory.exit_status, 0) << memory.err;
  std::vector<std::string> args = Args(dir_ / "d.jsonl");
  args.insert(args.end(), {"--topology", "disk", "--adjacency-cache", "64K"});
  CommandResult disk = RunStrata(args);
  ASSERT_EQ(disk.exit_status, 0) << disk.err;
  auto m = ReadJsonLines(dir_ / "m.jsonl");
  auto d = ReadJsonLines(dir_ / "d.jsonl");
  ASSERT_EQ(m.size(), 3u);
  ASSERT_EQ(d.size(), 3u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(m[e]["event"], "epoch");
    for (const char* key : {"epoch", "time_s", "train_loss", "val_acc", "batches", "disk_bytes",
                            "disk_reads", "hit_rate", "stage_busy", "peak_rss_bytes"}) {
      EXPECT_TRUE(m[e].contains(key)) << key;
    }
    EXPECT_GT(m[e]["gemm_gflops"].get<double>(), 0.0);
    EXPECT_EQ(m[e]["topology"], "memory");
    EXPECT_EQ(d[e]["topology"], "disk");
    EXPECT_GT(d[e]["adjacency_reads"].get<uint64_t>(), 0u);
    EXPECT_EQ(m[e]["train_loss"], d[e]["train_loss"]) << "epoch " << e;
  }
  EXPECT_EQ(m[2]["event"], "final");
  for (const char* key : {"test_acc", "val_acc", "best_epoch", "total_time_s"}) {
    EXPECT_TRUE(m[2].contains(key)) << key;
  }
  EXPECT_FALSE(m[2]["blas_core"].get<std::string>().empty());
  EXPECT_EQ(m[2]["test_acc"], d[2]["test_acc"]);
}

TEST_F(TrainCli, CheckpointIsEvaluatedWithEitherTopology) {
  std::vector<std::string> args = Args(dir_ / "m.jsonl");
  args.insert(args.end(), {"--checkpoint", dir_ / "ckpt"});
  CommandResult train = RunStrata(args);
  ASSERT_EQ(train.exit_status, 0) << train.err;
  std::vector<std::string> outputs;
  for (const char* topology : {"memory", "disk"}) {
    for (bool layerwise : {false, true}) {
      std::vector<std::string> eval_args = {"eval",        dir_ / "g",        "--checkpoint",
                                            dir_ / "ckpt", "--memory-budget", "64M",
                                            "--topology",  topology};
      if (layerwise) eval_args.push_back("--layerwise");
      CommandResult eval = RunStrata(eval_args);
      ASSERT_EQ(eval.exit_status, 0) << eval.err;
      outputs.push_back(eval.out);
    }
  }
  EXPECT_FALSE(outputs[0].empty());
  // Full-neighbourhood batches and layer-wise inference score alike.
  for (const std::string& output : outputs) EXPECT_EQ(output, outputs[0]);
}

// LABOR-* with dependent batches: the weighted layers train, and the losses do not depend on
// the pipeline (run-ahead, threads) or the feature store.
TEST_F(TrainCli, LaborImportanceTrainsTheSameWhateverThePipeline) {
  for (const char* model : {"sage", "gcn", "gat"}) {
    std::vector<std::vector<double>> losses;
    for (int variant = 0; variant < 2; ++variant) {
      const std::string metrics = dir_ / (std::string(model) + std::to_string(variant) + ".jsonl");
      std::vector<std::string> args = Args(metrics);
      args.insert(args.end(), {"--model", model, "--sampler", "labor", "--labor-importance", "star",
                               "--batch-dependency", "4"});
      if (variant == 1) {
        args.insert(args.end(),
                    {"--run-ahead", "1", "--threads", "1", "--feature-store", "direct"});
      }
      CommandResult run = RunStrata(args);
      ASSERT_EQ(run.exit_status, 0) << model << ": " << run.err;
      losses.emplace_back();
      for (const nlohmann::json& line : ReadJsonLines(metrics)) {
        if (line["event"] == "epoch") losses.back().push_back(line["train_loss"].get<double>());
      }
    }
    ASSERT_EQ(losses[0].size(), 2u) << model;
    EXPECT_EQ(losses[0], losses[1]) << model;
    EXPECT_LT(losses[0][1], losses[0][0]) << model;
  }
}

TEST_F(TrainCli, BadOptionsAreOneLineErrors) {
  struct BadOption {
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<BadOption> cases = {
      {{"--topology", "cloud"}, "--topology"},
      {{"--adjacency-cache", "lots"}, "--adjacency-cache"},
      {{"--max-read-bytes", "1000"}, "4096"},
      {{"--run-ahead", "0"}, "--run-ahead"},
      {{"--threads", "0"}, "--threads: Value 0 not in range 1 to 4096"},
      {{"--eval", "layerwise", "--eval-fanouts", "5,5"}, "--eval-fanouts"},
      {{"--sampler", "ladies"}, "--sampler 'ladies'"},
      {{"--batch-dependency", "8"}, "--batch-dependency needs --sampler labor"},
      {{"--sampler", "labor", "--labor-importance", "lots"}, "--labor-importance 'lots'"},
      {{"--patience", "2", "--eval-every", "0"}, "--patience"},
      {{"--time-limit", "-5"}, "--time-limit"},
  };
  for (const BadOption& bad : cases) {
    std::vector<std::string> args = Args(dir_ / "m.jsonl");
    args.insert(args.end(), bad.extra.begin(), bad.extra.end());
    ExpectInputError(RunStrata(args), {bad.message});
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "m.jsonl"));
}

// A run that stops early says so, and why, before its final line.
TEST_F(TrainCli, TimeLimitStopsTheRunAndSaysSo) {
  std::vector<std::string> args = Args(dir_ / "m.jsonl");
  *(std::find(args.begin(), args.end(), "--epochs") + 1) = "5";
  args.insert(args.end(), {"--time-limit", "0.000001"});
  const CommandResult result = RunStrata(args);
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(result.out.find("stopped after epoch 0: past --time-limit\nfinal:"), std::string::npos)
      << result.out;
  const std::string metrics = testing::ReadFileBytes(dir_ / "m.jsonl");
  EXPECT_EQ(std::count(metrics.begin(), metrics.end(), '\n'), 2) << metrics;
}

// Opening the dataset compares every file's size with meta.json, so a truncated adjacency is
// refused before the full-graph runner plans its blocks (a file truncated later, mid-pass, is
// tests/fullgraph/row_block_source_test.cc's).
TEST_F(TrainCli, FullGraphWithATruncatedAdjacencyIsOneLineError) {
  std::filesystem::resize_file(dir_ / "g/graph/indices.bin", 4096);
  ExpectInputError(RunStrata({"train", dir_ / "g", "--full-graph", "--model", "gcn", "--hidden",
                              "16", "--epochs", "1", "--memory-budget", "2M"}),
                   {"graph/indices.bin"});
}

// A budget too small for the full graph's intermediates row-blocks them on disk: the same
// losses as in memory, scratch writes in the metrics, nothing left in the scratch directory;
// a scratch directory that does not exist is one line naming it, and no metrics file.
TEST_F(TrainCli, FullGraphIntermediatesOnDisk) {
  auto args = [&](const std::string& budget, const std::string& metrics,
                  const std::string& scratch) {
    return std::vector<std::string>{"train",
                                    dir_ / "g",
                                    "--full-graph",
                                    "--model",
                                    "gcn",
                                    "--hidden",
                                    "16",
                                    "--epochs",
                                    "2",
                                    "--seed",
                                    "5",
                                    "--full-graph-chunk-rows",
                                    "1024",
                                    "--memory-budget",
                                    budget,
                                    "--metrics-out",
                                    metrics,
                                    "--scratch-dir",
                                    scratch};
  };
  std::filesystem::create_directories(dir_ / "scratch");
  CommandResult memory = RunStrata(args("3M", dir_ / "m.jsonl", dir_ / "scratch"));
  ASSERT_EQ(memory.exit_status, 0) << memory.err;
  EXPECT_NE(memory.err.find("intermediates in memory"), std::string::npos) << memory.err;
  CommandResult disk = RunStrata(args("1650K", dir_ / "d.jsonl", dir_ / "scratch"));
  ASSERT_EQ(disk.exit_status, 0) << disk.err;
  EXPECT_NE(disk.err.find("intermediates row-blocked on disk"), std::string::npos) << disk.err;
  auto m = ReadJsonLines(dir_ / "m.jsonl");
  auto d = ReadJsonLines(dir_ / "d.jsonl");
  ASSERT_EQ(m.size(), 3u);
  ASSERT_EQ(d.size(), 3u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(m[e]["train_loss"], d[e]["train_loss"]) << "epoch " << e;
    EXPECT_EQ(m[e]["scratch_bytes_written"], 0u);
    EXPECT_GT(d[e]["scratch_bytes_written"].get<uint64_t>(), 0u);
  }
  EXPECT_EQ(m[2]["test_acc"], d[2]["test_acc"]);
  EXPECT_LE(d[2]["budget_peak_bytes"].get<uint64_t>(), d[2]["memory_budget_bytes"].get<uint64_t>());
  EXPECT_TRUE(testing::ListDirectory(dir_ / "scratch").empty());
  ExpectInputError(RunStrata(args("1650K", dir_ / "x.jsonl", dir_ / "missing")),
                   {dir_ / "missing", "scratch file"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x.jsonl"));
}

}  // namespace
}  // namespace strata
