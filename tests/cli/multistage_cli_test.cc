// `strata train --multistage partition` end to end: the metrics carry the macro-batch fields,
// the run-ahead changes no loss, and bad input is one line with exit status 2 (buffers beyond
// the budget: tests/train/macro_batch_source_test.cc).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
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
  std::vector<nlohmann::json> Lines(const std::string& path) const {
    std::vector<nlohmann::json> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }
  ScratchDir dir_;
};

TEST_F(MultistageCli, MetricsHaveTheMacroBatchFieldsAndRunAheadChangesNoLoss) {
  std::vector<std::string> a = Args(dir_ / "p", dir_ / "a.jsonl");
  a.insert(a.end(), {"--macro-batch", "3", "--reuse", "2"});
  std::vector<std::string> b = a;
  b[15] = dir_ / "b.jsonl";  // --metrics-out's value
  b.insert(b.end(), {"--run-ahead", "1", "--threads", "1"});
  auto ra = RunStrata(a);
  ASSERT_EQ(ra.exit_status, 0) << ra.err;
  auto rb = RunStrata(b);
  ASSERT_EQ(rb.exit_status, 0) << rb.err;
  const auto x = Lines(dir_ / "a.jsonl"), y = Lines(dir_ / "b.jsonl");
  ASSERT_EQ(x.size(), 3u);
  ASSERT_EQ(y.size(), 3u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(x[e]["macro_batches"], 3);  // 8 partitions, 3 at a time
    EXPECT_EQ(x[e]["reuse_mean"], 2.0);
    EXPECT_GT(x[e]["load_bytes"].get<uint64_t>(), 0u);
    for (const char* key : {"load_busy_s", "load_rate_bytes_per_s", "stall_s"}) {
      EXPECT_TRUE(x[e].contains(key)) << key;
    }
    EXPECT_EQ(x[e]["train_loss"], y[e]["train_loss"]) << "epoch " << e;
  }
}

TEST_F(MultistageCli, BadInputIsOneLine) {
  ExpectInputError(RunStrata(Args(dir_ / "g", dir_ / "m.jsonl")), {"strata partition"});
  std::vector<std::string> args = Args(dir_ / "p", dir_ / "m.jsonl");
  args.insert(args.end(), {"--reuse", "5"});
  ExpectInputError(RunStrata(args), {"--reuse"});
  args = Args(dir_ / "p", dir_ / "m.jsonl");
  args[args.size() - 1] = "lbs";
  ExpectInputError(RunStrata(args), {"--multistage"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "m.jsonl"));
}

}  // namespace
}  // namespace strata
