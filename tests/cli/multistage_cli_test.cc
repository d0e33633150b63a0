// `strata train --multistage partition|pbs|lbs` end to end: the metrics carry the macro-batch
// fields (and PBS's halo and history fields), the run-ahead changes no loss, and bad input is one
// line with exit status 2 (buffers beyond the budget: tests/multistage/macro_batch_source_test.cc,
// large_batch_loader_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "strata/dataset.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ExpectInputError;
using testing::RunStrata;
using testing::ScratchDir;

class MultistageCli : public ::testing::Test {
 protected:
  void SetUp() override {
    GenerateDataset(testing::SmallGraph(dir_ / "g", 2000, 16, 4, 6, 5));
    ASSERT_EQ(RunStrata({"partition", dir_ / "g", dir_ / "p", "--parts", "8", "--hubs", "0.02"})
                  .exit_status,
              0);
  }
  std::vector<std::string> Args(const std::string& dataset, const std::string& metrics) const {
    return {"train",      dataset, "--fanouts",     "5,5",   "--hidden",        "16",
            "--epochs",   "2",     "--batch-size",  "64",    "--memory-budget", "64M",
            "--io-depth", "16",    "--metrics-out", metrics, "--multistage",    "partition"};
  }
  // Runs `args` (two epochs, metrics to a.jsonl) and again with --run-ahead 1 --threads 1;
  // expects the macro-batch fields and the same losses and accuracy. Returns the first
  // run's stderr.
  std::string RunWithBothRunAheads(const std::vector<std::string>& args, uint64_t macro_batches,
                                   double reuse) const {
    std::vector<std::string> shallow = args;
    shallow[15] = dir_ / "b.jsonl";  // --metrics-out's value
    shallow.insert(shallow.end(), {"--run-ahead", "1", "--threads", "1"});
    const auto deep_run = RunStrata(args);
    EXPECT_EQ(deep_run.exit_status, 0) << deep_run.err;
    const auto shallow_run = RunStrata(shallow);
    EXPECT_EQ(shallow_run.exit_status, 0) << shallow_run.err;
    const auto x = testing::ReadJsonLines(dir_ / "a.jsonl"),
               y = testing::ReadJsonLines(dir_ / "b.jsonl");
    EXPECT_EQ(x.size(), 3u);
    EXPECT_EQ(y.size(), 3u);
    if (x.size() != 3 || y.size() != 3) return deep_run.err;
    for (int e = 0; e < 2; ++e) {
      EXPECT_EQ(x[e]["macro_batches"], macro_batches);
      EXPECT_EQ(x[e]["reuse_mean"], reuse);
      EXPECT_GT(x[e]["load_bytes"].get<uint64_t>(), 0u);
      for (const char* key : {"load_busy_s", "load_rate_bytes_per_s", "load_wait_s", "stall_s"}) {
        EXPECT_TRUE(x[e].contains(key)) << key;
      }
      EXPECT_EQ(x[e]["train_loss"], y[e]["train_loss"]) << "epoch " << e;
    }
    EXPECT_EQ(x[2]["test_acc"], y[2]["test_acc"]);
    return deep_run.err;
  }
  ScratchDir dir_;
};

// The progress lines' disk rates stay those of the epoch after an evaluation has read rows.
TEST_F(MultistageCli, MetricsHaveTheMacroBatchFieldsAndRunAheadChangesNoLoss) {
  std::vector<std::string> args = Args(dir_ / "p", dir_ / "a.jsonl");
  args.insert(args.end(), {"--macro-batch", "3", "--reuse", "2", "--log-every", "1"});
  const std::string log = RunWithBothRunAheads(args, 3, 2.0);  // 8 partitions, 3 at a time
  ASSERT_NE(log.find("epoch 1 batch 1/"), std::string::npos) << log;
  for (size_t at = log.find("disk "); at != std::string::npos; at = log.find("disk ", at + 1)) {
    EXPECT_LT(std::stod(log.substr(at + 5, 20)), 1e4) << log.substr(at, 40);
  }
}

// Adaptive reuse: between one and four passes per macro-batch, as the metrics report.
TEST_F(MultistageCli, AdaptiveReuseReportsThePassesTaken) {
  std::vector<std::string> args = Args(dir_ / "p", dir_ / "a.jsonl");
  args.insert(args.end(), {"--macro-batch", "2", "--reuse", "auto"});
  const auto run = RunStrata(args);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const auto lines = testing::ReadJsonLines(dir_ / "a.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(lines[e]["macro_batches"], 4);
    EXPECT_GE(lines[e]["reuse_mean"].get<double>(), 1.0);
    EXPECT_LE(lines[e]["reuse_mean"].get<double>(), (3 * 4 + 1) / 4.0);  // the last gets one
  }
}

// Partition-based sampling: every macro-batch has a halo, the history is read and written
// back, the halo's rows have ages from the second epoch on, and the run-ahead and threads
// change no loss (the table is written at points fixed by the macro-batch order).
TEST_F(MultistageCli, PartitionBasedSamplingExchangesHistoryAndRunAheadChangesNoLoss) {
  std::vector<std::string> args = Args(dir_ / "p", dir_ / "a.jsonl");
  args.back() = "pbs";
  args[3] = "5,5,5";  // --fanouts' value
  args.insert(args.end(), {"--macro-batch", "2", "--layers", "3"});
  RunWithBothRunAheads(args, 4, 1.0);
  const auto lines = testing::ReadJsonLines(dir_ / "a.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_GT(lines[e]["halo_nodes"].get<uint64_t>(), 0u);
    EXPECT_GT(lines[e]["halo_bytes"].get<uint64_t>(), 0u);
    EXPECT_GT(lines[e]["historical_bytes_read"].get<uint64_t>(), 0u);
    EXPECT_GT(lines[e]["historical_bytes_written"].get<uint64_t>(), 0u);
  }
  // In the first epoch the first macro-batches find the table empty; by the second, every
  // partition was written back once, so the rows used have ages.
  EXPECT_GT(lines[0]["historical_never_written"].get<uint64_t>(), 0u);
  EXPECT_GT(lines[1]["historical_age_steps"].get<double>(), 0.0);
  EXPECT_LT(lines[1]["historical_never_written"].get<uint64_t>(),
            lines[0]["historical_never_written"].get<uint64_t>());
}

// Large-batch sampling needs no partitions.
TEST_F(MultistageCli, LargeBatchSamplingTrainsAnyDatasetAndRunAheadChangesNoLoss) {
  std::vector<std::string> args = Args(dir_ / "g", dir_ / "a.jsonl");
  args.back() = "lbs";
  args[9] = "16";  // --batch-size's value
  args.insert(args.end(), {"--macro-batch", "2", "--macro-fanouts", "10,10", "--log-every", "2"});
  const uint64_t batches = (Dataset::Open(dir_ / "g").ReadSplit(Split::kTrain).size() + 15) / 16;
  const std::string log = RunWithBothRunAheads(args, (batches + 1) / 2, 1.0);
  EXPECT_NE(log.find("batch 2/"), std::string::npos) << log;
  EXPECT_NE(log.find(fmt::format("macro-batch 1/{}", (batches + 1) / 2)), std::string::npos) << log;
}

TEST_F(MultistageCli, BadInputIsOneLine) {
  ExpectInputError(RunStrata(Args(dir_ / "g", dir_ / "m.jsonl")), {"strata partition"});
  std::vector<std::string> args = Args(dir_ / "p", dir_ / "m.jsonl");
  args.insert(args.end(), {"--reuse", "5"});
  ExpectInputError(RunStrata(args), {"--reuse"});
  args.back() = "often";
  ExpectInputError(RunStrata(args), {"reuse 'often' is neither a number of passes nor auto"});
  args = Args(dir_ / "p", dir_ / "m.jsonl");
  args[args.size() - 1] = "metis";
  ExpectInputError(RunStrata(args), {"--multistage 'metis': expected partition, lbs or pbs"});
  args.back() = "pbs";
  args.insert(args.end(), {"--halo-hops", "2"});
  ExpectInputError(RunStrata(args), {"--halo-hops 2"});
  args = Args(dir_ / "p", dir_ / "m.jsonl");
  args.back() = "pbs";
  args[3] = "5";  // --fanouts' value
  args.insert(args.end(), {"--layers", "1"});
  ExpectInputError(RunStrata(args), {"two layers or more"});
  args = Args(dir_ / "g", dir_ / "m.jsonl");
  args.back() = "pbs";
  ExpectInputError(RunStrata(args), {"--multistage pbs needs a partitioned dataset"});
  args = Args(dir_ / "p", dir_ / "m.jsonl");
  args.insert(args.end(), {"--macro-fanouts", "5"});
  ExpectInputError(RunStrata(args), {"--macro-fanouts"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "m.jsonl"));
}

}  // namespace
}  // namespace strata
