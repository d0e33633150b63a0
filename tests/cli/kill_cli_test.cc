// Kill tests: `strata generate`, `import`, `partition` and `train --checkpoint` SIGKILLed at
// random moments (uniform over an uninterrupted run's duration). After every kill the
// published output is the previous complete one or the new complete one, never a mixture or a
// partial file; and the next run of the same command leaves no staging litter. For training,
// the checkpoint is that of some completed epoch, byte for byte, and resuming from it ends in
// the uninterrupted run's final checkpoint, byte for byte.
//
// STRATA_KILL_POINTS sets the kills per command (default 8); a summary line per command says
// how many kills landed mid-run and what state each left.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "strata/dataset.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::ScratchDir;

constexpr int kKilled = 128 + SIGKILL;

int KillPoints() {
  const char* text = std::getenv("STRATA_KILL_POINTS");
  return text != nullptr && std::atoi(text) > 0 ? std::atoi(text) : 8;
}

std::vector<std::string> Strata(std::vector<std::string> args) {
  args.insert(args.begin(), STRATA_BINARY);
  return args;
}

// Runs `args` to the end; returns its wall time in seconds.
double RunToEnd(const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = testing::RunCommand(Strata(args));
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The kill moments: uniform over [0, duration), the same ones every run of the test.
std::vector<double> KillMoments(double duration, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> moment(0, duration);
  std::vector<double> moments(KillPoints());
  for (double& m : moments) m = moment(rng);
  return moments;
}

// What a kill left, counted per state for the summary line.
class Tally {
 public:
  explicit Tally(std::string command) : command_(std::move(command)) {}
  ~Tally() {
    std::cout << "kill test: " << command_ << ":";
    for (const auto& [state, count] : counts_) std::cout << " " << state << " " << count;
    std::cout << "\n";
  }
  void Count(const std::string& state) { ++counts_[state]; }

 private:
  std::string command_;
  std::map<std::string, int> counts_;
};

// A dataset command that replaces OUT (--force) killed mid-run: OUT is then exactly the
// dataset before or the one after, verified whole; the same command run to the end then leaves
// the new one and nothing else. `make(i)` is the i-th command, each writing a dataset unlike
// the one before it; `reference(i)` a directory holding what make(i) writes.
void KillDatasetWrites(const std::string& name, const ScratchDir& s,
                       const std::function<std::vector<std::string>(int, const std::string&)>& make,
                       std::vector<std::string> inputs) {
  // References: commands 0 and 1 run to the end into their own directories.
  const std::string out = s / "out";
  const double duration = RunToEnd(make(0, s / "ref0"));
  RunToEnd(make(1, s / "ref1"));
  const DatasetMeta ref[2] = {Dataset::Open(s / "ref0").meta(), Dataset::Open(s / "ref1").meta()};
  RunToEnd(make(0, out));
  Tally tally(name);
  const std::vector<double> moments = KillMoments(duration, 17);
  for (size_t i = 0; i < moments.size(); ++i) {
    // OUT holds command i % 2's dataset; command (i + 1) % 2 replaces it and is killed.
    const int before = static_cast<int>(i % 2), after = 1 - before;
    CommandResult r = testing::RunCommand(Strata(make(after, out)), {.kill_after_s = moments[i]});
    ASSERT_TRUE(r.exit_status == 0 || r.exit_status == kKilled) << r.err;
    const Dataset left = Dataset::Open(out);
    testing::VerifyDataset(left);
    const bool is_before = testing::SameDigests(left.meta(), ref[before]);
    const bool is_after = testing::SameDigests(left.meta(), ref[after]);
    ASSERT_TRUE(is_before || is_after) << "kill " << i << " at " << moments[i] << " s";
    tally.Count(r.exit_status == kKilled ? (is_before ? "killed:previous" : "killed:new")
                                         : "finished");
    RunToEnd(make(after, out));
    std::vector<std::string> names = inputs;
    names.insert(names.end(), {"out", "ref0", "ref1"});
    testing::ExpectOnlyEntries(s.path(), names);
    // The next kill replaces this dataset.
    ASSERT_TRUE(testing::SameDigests(Dataset::Open(out).meta(), ref[after]));
  }
}

std::vector<std::string> KilledGenerateArgs(int variant, const std::string& out) {
  return {"generate",
          out,
          "--force",
          "--nodes",
          "60000",
          "--avg-degree",
          "8",
          "--feature-dim",
          "32",
          "--classes",
          "4",
          "--seed",
          std::to_string(variant + 1),
          "--memory-budget",
          "64M"};
}

TEST(KillCli, Generate) {
  ScratchDir s;
  KillDatasetWrites("generate", s, KilledGenerateArgs, {});
}

TEST(KillCli, Import) {
  ScratchDir s;
  for (int v = 0; v < 2; ++v) {
    RunToEnd(KilledGenerateArgs(v, s / "gen"));
    RunToEnd({"export", s / "gen", "--edge-list", s / ("edges" + std::to_string(v) + ".txt")});
    fs::remove_all(s / "gen");
  }
  KillDatasetWrites("import", s,
                    [&](int v, const std::string& out) {
                      return std::vector<std::string>{"import",
                                                      out,
                                                      "--force",
                                                      "--edge-list",
                                                      s / ("edges" + std::to_string(v) + ".txt"),
                                                      "--memory-budget",
                                                      "64M"};
                    },
                    {"edges0.txt", "edges1.txt"});
}

TEST(KillCli, Partition) {
  ScratchDir s;
  RunToEnd(KilledGenerateArgs(0, s / "in"));
  KillDatasetWrites("partition", s,
                    [&](int v, const std::string& out) {
                      return std::vector<std::string>{"partition",
                                                      s / "in",
                                                      out,
                                                      "--force",
                                                      "--parts",
                                                      "16",
                                                      "--hubs",
                                                      "0.01",
                                                      "--seed",
                                                      std::to_string(v + 1),
                                                      "--memory-budget",
                                                      "64M"};
                    },
                    {"in"});
}

// train --checkpoint killed mid-run leaves no checkpoint or one of a completed epoch (the
// bytes a run of that many epochs ends with); --resume from it ends where the uninterrupted
// run ends, byte for byte.
TEST(KillCli, TrainCheckpoint) {
  ScratchDir s;
  GenerateDataset(testing::SmallGraph(s / "g", 20000, 32, 4));
  constexpr int kEpochs = 4;
  auto train = [&](const std::string& dir, int epochs, bool resume) {
    std::vector<std::string> args = {"train",           s / "g",
                                     "--model",         "sage",
                                     "--layers",        "2",
                                     "--hidden",        "32",
                                     "--fanouts",       "5,5",
                                     "--batch-size",    "256",
                                     "--epochs",        std::to_string(epochs),
                                     "--eval-every",    "1",
                                     "--feature-store", "memory",
                                     "--memory-budget", "256M",
                                     "--checkpoint",    dir};
    if (resume) args.push_back("--resume");
    return args;
  };
  // The checkpoint after each epoch: every epoch is evaluated, so a run of k epochs ends with
  // the checkpoint a longer run writes after epoch k.
  std::vector<std::string> after_epoch(kEpochs + 1);
  double duration = 0;
  for (int k = 1; k <= kEpochs; ++k) {
    const std::string dir = s / ("ref" + std::to_string(k));
    duration = RunToEnd(train(dir, k, false));
    after_epoch[k] = testing::ReadFileBytes(dir + "/checkpoint.bin");
  }
  Tally tally("train --checkpoint");
  const std::vector<double> moments = KillMoments(duration, 29);
  for (size_t i = 0; i < moments.size(); ++i) {
    const std::string dir = s / ("run" + std::to_string(i));
    CommandResult r =
        testing::RunCommand(Strata(train(dir, kEpochs, false)), {.kill_after_s = moments[i]});
    ASSERT_TRUE(r.exit_status == 0 || r.exit_status == kKilled) << r.err;
    const std::string path = dir + "/checkpoint.bin";
    int epochs_done = 0;
    if (fs::exists(path)) {
      const std::string bytes = testing::ReadFileBytes(path);
      for (int k = 1; k <= kEpochs; ++k) {
        if (bytes == after_epoch[k]) epochs_done = k;
      }
      ASSERT_NE(epochs_done, 0) << "kill " << i << " at " << moments[i]
                                << " s left a checkpoint of no completed epoch";
    }
    tally.Count(r.exit_status == kKilled ? "killed:epochs_done=" + std::to_string(epochs_done)
                                         : "finished");
    RunToEnd(train(dir, kEpochs, true));
    EXPECT_EQ(testing::ReadFileBytes(path), after_epoch[kEpochs]) << "kill " << i;
    if (fs::exists(dir)) testing::ExpectOnlyEntries(dir, {"checkpoint.bin"});
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace strata
