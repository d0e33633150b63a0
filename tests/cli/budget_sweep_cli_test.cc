// The memory budget is planned and hard. Over a sweep of budgets on a graph with hubs, every
// training path either refuses at start — before any epoch, naming the smallest budget that
// works — or finishes with its peak RSS within the budget plus the process's fixed overhead;
// and the smallest budget it named then works.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "strata/generate.h"
#include "strata/memory_budget.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::RunStrata;

// What the process holds beside its budget: the binary and its libraries (about 11 MiB), the
// threads' stacks and BLAS buffers, and the small structures the budget leaves uncharged
// (docs/training.md, "The memory budget").
constexpr uint64_t kFixedOverheadBytes = uint64_t{32} << 20;
// Under the sanitizers the process also holds their shadow memory and quarantine (about 100 MiB
// here), so there the sweep checks only that each run refuses at start or finishes.
#ifdef STRATA_SANITIZED
constexpr bool kChecksRss = false;
#else
constexpr bool kChecksRss = true;
#endif

struct SweepCase {
  const char* name;
  bool partitioned;
  std::vector<std::string> options;
};

// A run's outcome, and for one that finished its peak RSS as its final metrics record gives
// it (the process's own high-water mark: wait4's counts what the test process held at fork).
struct SweepRun {
  testing::CommandResult result;
  uint64_t peak_rss_bytes = 0;
};

class BudgetSweepCli : public ::testing::TestWithParam<SweepCase> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir();
    GenerateOptions g = testing::SmallGraph(*dir_ / "rmat", 4000, 64, 4, 10, 3);
    g.graph = GraphModel::kRmat;
    GenerateDataset(g);
    ASSERT_EQ(
        RunStrata({"partition", *dir_ / "rmat", *dir_ / "parts", "--parts", "8", "--hubs", "0.01"})
            .exit_status,
        0);
  }
  static void TearDownTestSuite() { delete dir_; }

  SweepRun Train(const SweepCase& c, const std::string& budget) {
    const std::string metrics = *dir_ / "metrics.jsonl";
    std::vector<std::string> args = {"train",           *dir_ / (c.partitioned ? "parts" : "rmat"),
                                     "--epochs",        "2",
                                     "--hidden",        "16",
                                     "--memory-budget", budget,
                                     "--metrics-out",   metrics};
    args.insert(args.end(), c.options.begin(), c.options.end());
    SweepRun run{RunStrata(args)};
    if (run.result.exit_status == 0) {
      run.peak_rss_bytes = testing::ReadJsonLines(metrics).back().at("peak_rss_bytes");
    }
    return run;
  }

  static testing::ScratchDir* dir_;
};
testing::ScratchDir* BudgetSweepCli::dir_ = nullptr;

// The smallest budget a refusal names, as --memory-budget takes it ("24.4M").
std::string NamedBudget(const std::string& error) {
  static const std::regex kNamed(
      "(?:raise --memory-budget to|the smallest budget that works is|at least) "
      "([0-9.]+) ([KMG])iB");
  std::smatch match;
  if (!std::regex_search(error, match, kNamed)) return "";
  return match[1].str() + match[2].str();
}

// Checks a run at `budget`: finished within it, or refused before any epoch naming a budget.
// Returns the budget named, empty when the run finished.
std::string FinishedOrNamedBudget(const SweepRun& train, const std::string& budget) {
  const testing::CommandResult& run = train.result;
  if (run.exit_status == 0) {
    if (kChecksRss) {
      EXPECT_LE(train.peak_rss_bytes, ParseByteSize(budget, "budget") + kFixedOverheadBytes);
    }
    return "";
  }
  EXPECT_EQ(run.exit_status, 2) << run.err;
  EXPECT_EQ(run.out.find("epoch "), std::string::npos) << "refused after training: " << run.err;
  EXPECT_EQ(run.err.find("epoch "), std::string::npos) << run.err;
  const std::string named = NamedBudget(run.err);
  EXPECT_FALSE(named.empty()) << "names no budget: " << run.err;
  return named;
}

TEST_P(BudgetSweepCli, RefusesAtStartOrFinishesWithinTheBudget) {
  const SweepCase& c = GetParam();
  std::string smallest;
  for (const char* budget : {"2M", "8M", "16M", "24M", "32M", "48M", "96M"}) {
    SCOPED_TRACE(budget);
    const std::string named = FinishedOrNamedBudget(Train(c, budget), budget);
    if (smallest.empty()) smallest = named;
  }
  if (smallest.empty()) return;
  SCOPED_TRACE("the smallest budget named, " + smallest);
  EXPECT_EQ(FinishedOrNamedBudget(Train(c, smallest), smallest), "");
}

INSTANTIATE_TEST_SUITE_P(
    Paths, BudgetSweepCli,
    ::testing::Values(
        SweepCase{"sampled", false, {"--fanouts", "5,5", "--eval-fanouts", "5,5"}},
        SweepCase{"full_neighbourhoods",
                  false,
                  {"--model", "gcn", "--fanouts=-1,-1", "--batch-size", "50"}},
        SweepCase{
            "gat_labor",
            false,
            {"--model", "gat", "--sampler", "labor", "--fanouts", "4,4", "--eval-fanouts", "4,4"}},
        SweepCase{"layerwise",
                  false,
                  {"--fanouts", "5,5", "--eval", "layerwise", "--feature-store", "memory"}},
        SweepCase{"multistage",
                  true,
                  {"--fanouts", "5,5", "--eval-fanouts", "5,5", "--multistage", "partition"}},
        SweepCase{"multistage_pbs",
                  true,
                  {"--fanouts", "5,5", "--eval-fanouts", "5,5", "--multistage", "pbs"}},
        SweepCase{"multistage_lbs",
                  false,
                  {"--fanouts", "5,5", "--eval-fanouts", "5,5", "--multistage", "lbs"}},
        SweepCase{"full_graph", false, {"--full-graph", "--model", "gcn"}}),
    [](const ::testing::TestParamInfo<SweepCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace strata
