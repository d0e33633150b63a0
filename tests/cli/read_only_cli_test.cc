// Training and evaluation never write into the dataset directory: every training path (each
// feature store, multistage partition and LBS, full graph), evaluation and verification run on
// read-only copies (files 0444, directories 0555, and as `nobody` when the test runs as root,
// since root ignores mode bits), and leave every name, size and modification time as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cli_test_helpers.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::ScratchDir;

// Every entry under `dir`: its size and modification time.
std::map<std::string, std::tuple<uint64_t, int64_t, int64_t>> Inventory(const std::string& dir) {
  std::map<std::string, std::tuple<uint64_t, int64_t, int64_t>> entries;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    EXPECT_EQ(::lstat(entry.path().c_str(), &st), 0);
    entries[fs::relative(entry.path(), dir).string()] = {static_cast<uint64_t>(st.st_size),
                                                         st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  }
  return entries;
}

void MakeReadOnly(const std::string& dir) {
  const auto read_only_file =
      fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
  const auto read_only_dir =
      read_only_file | fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    fs::permissions(entry.path(), entry.is_directory() ? read_only_dir : read_only_file);
  }
  fs::permissions(dir, read_only_dir);
}

// Gives the owner back write access on scope exit, so that the scratch directory can go.
struct WritableAgain {
  ~WritableAgain() {
    for (const std::string& dir : dirs) {
      std::error_code ec;
      fs::permissions(dir, fs::perms::owner_all, ec);
      for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
        fs::permissions(entry.path(), fs::perms::owner_all, ec);
      }
    }
  }
  std::vector<std::string> dirs;
};

TEST(ReadOnlyDataset, TrainingAndEvaluationWriteNothingIntoIt) {
  ScratchDir s;
  GenerateDataset(testing::SmallGraph(s / "g", 3000, 16, 3));
  CommandResult partition = testing::RunStrata(
      {"partition", s / "g", s / "p", "--parts", "4", "--hubs", "0.05", "--memory-budget", "64M"});
  ASSERT_EQ(partition.exit_status, 0) << partition.err;
  // Outputs go to a directory of their own, which anyone may write.
  fs::create_directory(s / "out");
  fs::permissions(s / "out", fs::perms::all);
  fs::permissions(s.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  const std::string g = s / "g", p = s / "p", out = s / "out";
  WritableAgain restore{{g, p}};
  MakeReadOnly(g);
  MakeReadOnly(p);
  const auto g_before = Inventory(g), p_before = Inventory(p);

  const std::vector<std::string> common = {"--layers",        "2",  "--hidden",  "16",
                                           "--epochs",        "2",  "--fanouts", "4,4",
                                           "--memory-budget", "64M"};
  const std::vector<std::vector<std::string>> commands = {
      {"train", g, "--feature-store", "memory", "--checkpoint", out + "/ck", "--metrics-out",
       out + "/m.jsonl"},
      {"train", g, "--feature-store", "direct"},
      {"train", g, "--feature-store", "mmap"},
      {"train", p, "--multistage", "partition"},
      {"train", g, "--multistage", "lbs"},
      {"train", g, "--full-graph", "--model", "gcn", "--layers", "2", "--hidden", "16", "--epochs",
       "2", "--memory-budget", "64M"},
      {"eval", g, "--checkpoint", out + "/ck"},
      {"info", g, "--verify"},
      {"info", p, "--verify"},
  };
  for (std::vector<std::string> args : commands) {
    if (args[0] == "train" && args[2] != "--full-graph") {
      args.insert(args.end(), common.begin(), common.end());
    }
    CommandResult r = testing::RunStrataUnprivileged(args);
    if (r.exit_status == 126) GTEST_SKIP() << "cannot drop privileges to run as nobody";
    EXPECT_EQ(r.exit_status, 0) << args[0] << " " << args[2] << ": " << r.err;
  }
  EXPECT_EQ(Inventory(g), g_before);
  EXPECT_EQ(Inventory(p), p_before);
}

}  // namespace
}  // namespace strata
