// `strata partition` end to end: the summary it prints, and bad input refused in one line
// with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_helpers.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ExpectInputError;
using testing::RunStrata;
using testing::ScratchDir;

class PartitionCli : public ::testing::Test {
 protected:
  void SetUp() override { GenerateDataset(testing::SmallGraph(dir_ / "g", 500, 8, 3)); }
  ScratchDir dir_;
};

TEST_F(PartitionCli, JsonSaysWhatWasWritten) {
  auto result = RunStrata({"partition", dir_ / "g", dir_ / "p", "--parts", "4", "--hubs", "0.1",
                           "--memory-budget", "32M", "--json"});
  ASSERT_EQ(result.exit_status, 0) << result.err;
  const nlohmann::json j = nlohmann::json::parse(result.out);
  EXPECT_EQ(j["method"], "gap");
  EXPECT_EQ(j["parts"], 4);
  EXPECT_EQ(j["hubs"], 50);
  EXPECT_GE(j["edge_cut_ratio"].get<double>(), 0.0);
  EXPECT_LT(j["edge_cut_ratio"].get<double>(), 1.0);
  auto verify = RunStrata({"info", dir_ / "p", "--verify"});
  EXPECT_EQ(verify.exit_status, 0) << verify.err;
}

TEST_F(PartitionCli, BadInputIsOneLineAndWritesNothing) {
  const std::string in = dir_ / "g", out = dir_ / "p";
  ExpectInputError(RunStrata({"partition", in, out, "--parts", "0"}), {"--parts"});
  ExpectInputError(RunStrata({"partition", in, out, "--parts", "501"}), {"--parts", "500"});
  ExpectInputError(RunStrata({"partition", in, out, "--parts", "4", "--method", "spectral"}),
                   {"spectral", "gap"});
  ExpectInputError(RunStrata({"partition", in, out, "--parts", "4", "--hubs", "1.5"}), {"--hubs"});
  ExpectInputError(RunStrata({"partition", dir_ / "missing", out, "--parts", "4"}), {"missing"});
  EXPECT_FALSE(std::filesystem::exists(out));
  ASSERT_EQ(RunStrata({"partition", in, out, "--parts", "4"}).exit_status, 0);
  ExpectInputError(RunStrata({"partition", out, dir_ / "again", "--parts", "2"}),
                   {"already partitioned"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "again"));
}

}  // namespace
}  // namespace strata
