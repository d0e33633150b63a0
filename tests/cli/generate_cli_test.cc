// `strata generate`: valid datasets from both graph models, byte-identical output for a seed
// whatever the thread count or memory budget, and nothing left behind when interrupted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_helpers.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::CommandResult;
using testing::Csc;
using testing::ExpectInputError;
using testing::ExpectOnlyEntries;
using testing::ReadArrayFile;
using testing::ReadFileBytes;
using testing::RunStrata;
using testing::SameDigests;
using testing::ScratchDir;
using testing::WriteTextFile;
namespace fs = std::filesystem;

std::vector<std::string> GenerateArgs(const std::string& out, const std::string& nodes,
                                      std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"generate",      out,  "--nodes",   nodes, "--avg-degree", "8",
                                   "--feature-dim", "16", "--classes", "4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void GenerateOrFail(const std::vector<std::string>& args) {
  CommandResult r = RunStrata(args);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

// What must hold of any published dataset: a well-formed CSC with sorted distinct in-neighbours
// below num_nodes, labels in range, disjoint in-range splits of the recorded sizes.
void ExpectWellFormed(const std::string& ds, uint32_t classes) {
  DatasetMeta meta = Dataset::Open(ds).meta();
  testing::VerifyDataset(Dataset::Open(ds));
  Csc csc = testing::ReadCsc(ds);
  ASSERT_EQ(csc.indptr.size(), meta.num_nodes + 1);
  EXPECT_EQ(csc.indptr.front(), 0u);
  EXPECT_EQ(csc.indptr.back(), meta.num_edges);
  ASSERT_EQ(csc.indices.size(), meta.num_edges);
  uint64_t zero = 0, max_degree = 0;
  for (uint64_t v = 0; v < meta.num_nodes; ++v) {
    ASSERT_LE(csc.indptr[v], csc.indptr[v + 1]) << "node " << v;
    uint64_t degree = csc.indptr[v + 1] - csc.indptr[v];
    zero += degree == 0;
    max_degree = std::max(max_degree, degree);
    for (uint64_t e = csc.indptr[v]; e < csc.indptr[v + 1]; ++e) {
      ASSERT_LT(csc.indices[e], meta.num_nodes) << "edge " << e;
      if (e > csc.indptr[v]) {
        ASSERT_LT(csc.indices[e - 1], csc.indices[e]) << "in-neighbours of " << v;
      }
    }
  }
  EXPECT_EQ(meta.in_degree.zero_count, zero);
  EXPECT_EQ(meta.in_degree.max, max_degree);

  std::vector<int32_t> labels = ReadArrayFile<int32_t>(ds + "/labels.bin");
  ASSERT_EQ(labels.size(), meta.num_nodes);
  for (int32_t label : labels) {
    ASSERT_GE(label, -1);
    ASSERT_LT(label, static_cast<int32_t>(classes));
  }
  EXPECT_LE(meta.num_classes, classes);
  std::vector<bool> seen(meta.num_nodes, false);
  for (auto [name, size] : {std::pair{"train", meta.train_size}, std::pair{"val", meta.val_size},
                            std::pair{"test", meta.test_size}}) {
    std::vector<uint32_t> ids = ReadArrayFile<uint32_t>(ds + "/split/" + name + ".bin");
    EXPECT_EQ(ids.size(), size) << name;
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end())) << "generated splits are ascending";
    for (uint32_t id : ids) {
      ASSERT_LT(id, meta.num_nodes) << name;
      ASSERT_FALSE(seen[id]) << "node " << id << " is in two splits";
      seen[id] = true;
      ASSERT_GE(labels[id], 0) << "split node " << id << " is unlabeled";
    }
  }
  // N rows of row_stride_bytes, zero-padded to a 4096-byte multiple (docs/format.md).
  EXPECT_EQ(fs::file_size(ds + "/features.bin"),
            (meta.num_nodes * meta.row_stride_bytes + 4095) / 4096 * 4096);
}

TEST(GenerateCli, WritesWellFormedSbmDataset) {
  ScratchDir s;
  GenerateOrFail(GenerateArgs(s / "sbm", "3000", {"--seed", "3"}));
  ExpectOnlyEntries(s.path(), {"sbm"});
  DatasetMeta meta = Dataset::Open(s / "sbm").meta();
  EXPECT_EQ(meta.num_nodes, 3000u);
  EXPECT_EQ(meta.feature_dim, 16u);
  EXPECT_EQ(meta.num_classes, 4u);
  EXPECT_GT(meta.num_edges, 3000u * 4);  // about 8 per node before deduplication
  EXPECT_LE(meta.num_edges, 3000u * 8);
  // Each node falls in a split with the default ratios 0.1 / 0.05 / 0.05.
  EXPECT_NEAR(static_cast<double>(meta.train_size), 300, 60);
  EXPECT_NEAR(static_cast<double>(meta.val_size), 150, 45);
  EXPECT_NEAR(static_cast<double>(meta.test_size), 150, 45);
  ExpectWellFormed(s / "sbm", 4);
}

TEST(GenerateCli, WritesWellFormedRmatDataset) {
  ScratchDir s;
  GenerateOrFail(GenerateArgs(s / "rmat", "3000", {"--graph", "rmat", "--seed", "5"}));
  DatasetMeta meta = Dataset::Open(s / "rmat").meta();
  EXPECT_EQ(meta.num_nodes, 3000u);
  EXPECT_GT(meta.num_edges, 3000u * 2);
  EXPECT_LE(meta.num_edges, 3000u * 8);
  ExpectWellFormed(s / "rmat", 4);
}

// --like sets the real graph's class count, width and degree; the three may still be given,
// the model's own options may not, and without --like they are required.
TEST(GenerateCli, LikeSetsAGraphCalibratedToARealOne) {
  ScratchDir s;
  GenerateOrFail({"generate", s / "p", "--like", "products", "--nodes", "6000", "--seed", "2"});
  const DatasetMeta meta = Dataset::Open(s / "p").meta();
  EXPECT_EQ(meta.num_classes, 47u);
  EXPECT_EQ(meta.feature_dim, 100u);
  // About 50 edges a node; fewer on a graph this small, whose leaves repeat more pairs.
  EXPECT_GT(meta.num_edges, 6000u * 30);
  EXPECT_LE(meta.num_edges, 6000u * 52);
  ExpectWellFormed(s / "p", 47);
  GenerateOrFail({"generate", s / "q", "--like", "papers100M", "--nodes", "6000", "--classes", "40",
                  "--feature-dim", "8"});
  EXPECT_EQ(Dataset::Open(s / "q").meta().num_classes, 40u);
  EXPECT_EQ(Dataset::Open(s / "q").meta().feature_dim, 8u);
  // Arxiv's classes are uneven: the largest holds several times the mean share.
  GenerateOrFail({"generate", s / "a", "--like", "arxiv", "--nodes", "6000"});
  const DatasetMeta arxiv = Dataset::Open(s / "a").meta();
  EXPECT_EQ(arxiv.num_classes, 40u);
  EXPECT_EQ(arxiv.feature_dim, 128u);
  EXPECT_LE(arxiv.num_edges, 6000u * 15);
  ExpectWellFormed(s / "a", 40);
  std::vector<uint64_t> sizes(40, 0);
  for (int32_t label : ReadArrayFile<int32_t>(s / "a" + "/labels.bin")) ++sizes[label];
  EXPECT_GT(*std::max_element(sizes.begin(), sizes.end()), 6000u * 4 / 40);
  ExpectInputError(
      RunStrata({"generate", s / "r", "--like", "products", "--nodes", "6000", "--noise", "2"}),
      {"--like products sets --noise"});
  ExpectInputError(
      RunStrata({"generate", s / "r", "--like", "arxiv", "--nodes", "6000", "--class-skew", "1"}),
      {"--like arxiv sets --class-skew"});
  ExpectInputError(RunStrata({"generate", s / "r", "--nodes", "6000", "--classes", "4"}),
                   {"--avg-degree, --feature-dim and --classes are required without --like"});
  ExpectInputError(RunStrata({"generate", s / "r", "--nodes", "6000", "--classes", "4",
                              "--avg-degree", "4", "--feature-dim", "4", "--class-skew", "1"}),
                   {"--class-skew needs --graph hsbm"});
  // Forty classes of skew 4 give the smallest a 2^-24 share: a block of 2^24 nodes at least.
  ExpectInputError(
      RunStrata({"generate", s / "r", "--graph", "hsbm", "--nodes", "6000", "--classes", "40",
                 "--avg-degree", "4", "--feature-dim", "4", "--class-skew", "4"}),
      {"--graph hsbm needs at least", "to give every class a block"});
  ExpectOnlyEntries(s.path(), {"a", "p", "q"});
}

TEST(GenerateCli, Float16AndEightByteIdsAreWellFormed) {
  ScratchDir s;
  GenerateOrFail(
      GenerateArgs(s / "ds", "2000", {"--feature-dtype", "float16", "--node-id-bytes", "8"}));
  DatasetMeta meta = Dataset::Open(s / "ds").meta();
  EXPECT_EQ(meta.feature_dtype, FeatureDtype::kFloat16);
  EXPECT_EQ(meta.node_id_bytes, 8u);
  EXPECT_EQ(fs::file_size(s / "ds/graph/indices.bin"), meta.num_edges * 8);
  EXPECT_EQ(fs::file_size(s / "ds/split/train.bin"), meta.train_size * 8);
  testing::VerifyDataset(Dataset::Open(s / "ds"));
}

TEST(GenerateCli, SameSeedGivesIdenticalFiles) {
  ScratchDir s;
  for (const char* graph : {"sbm", "rmat"}) {
    std::string a = s / (std::string(graph) + "-a"), b = s / (std::string(graph) + "-b");
    GenerateOrFail(GenerateArgs(a, "5000", {"--graph", graph, "--seed", "11"}));
    GenerateOrFail(GenerateArgs(b, "5000", {"--graph", graph, "--seed", "11"}));
    DatasetMeta ma = Dataset::Open(a).meta(), mb = Dataset::Open(b).meta();
    EXPECT_TRUE(SameDigests(ma, mb)) << graph;
    for (const auto& [name, digest] : ma.files) {
      EXPECT_EQ(ReadFileBytes(a + "/" + name), ReadFileBytes(b + "/" + name))
          << graph << " " << name;
    }
  }
}

TEST(GenerateCli, DifferentSeedsGiveDifferentGraphs) {
  ScratchDir s;
  GenerateOrFail(GenerateArgs(s / "a", "5000", {"--seed", "1"}));
  GenerateOrFail(GenerateArgs(s / "b", "5000", {"--seed", "2"}));
  DatasetMeta ma = Dataset::Open(s / "a").meta(), mb = Dataset::Open(s / "b").meta();
  EXPECT_NE(ma.files.at("graph/indices.bin").xxh64, mb.files.at("graph/indices.bin").xxh64);
  EXPECT_NE(ma.files.at("features.bin").xxh64, mb.files.at("features.bin").xxh64);
}

TEST(GenerateCli, ThreadCountDoesNotChangeFiles) {
  ScratchDir s;
  for (const char* graph : {"sbm", "rmat"}) {
    std::vector<DatasetMeta> metas;
    for (const char* threads : {"1", "2", "5"}) {
      std::string out = s / (std::string(graph) + "-t" + threads);
      GenerateOrFail(
          GenerateArgs(out, "20000", {"--graph", graph, "--seed", "9", "--threads", threads}));
      metas.push_back(Dataset::Open(out).meta());
    }
    EXPECT_TRUE(SameDigests(metas[0], metas[1])) << graph << ": --threads 1 vs 2";
    EXPECT_TRUE(SameDigests(metas[0], metas[2])) << graph << ": --threads 1 vs 5";
  }
}

TEST(GenerateCli, MemoryBudgetDoesNotChangeFiles) {
  // 100k nodes x 10 edges: with a 49M budget the CSC builder must spill and merge runs.
  ScratchDir s;
  std::vector<std::string> base = {"--avg-degree", "10", "--seed", "4"};
  auto args = [&](const std::string& out, const char* budget) {
    std::vector<std::string> a = {"generate",        out,   "--nodes",   "100000",
                                  "--feature-dim",   "4",   "--classes", "3",
                                  "--memory-budget", budget};
    a.insert(a.end(), base.begin(), base.end());
    return a;
  };
  GenerateOrFail(args(s / "small", "49M"));
  GenerateOrFail(args(s / "large", "2G"));
  EXPECT_TRUE(SameDigests(Dataset::Open(s / "small").meta(), Dataset::Open(s / "large").meta()));
}

TEST(GenerateCli, RefusesExistingOutputWithoutForceAndAForeignOneWithIt) {
  ScratchDir s;
  fs::create_directory(s / "out");
  WriteTextFile(s / "out/keep.txt", "precious");
  ExpectInputError(RunStrata(GenerateArgs(s / "out", "100")), {"out", "--force"});
  // Not a dataset: --force does not replace it either.
  ExpectInputError(RunStrata(GenerateArgs(s / "out", "100", {"--force"})),
                   {"out", "Strata dataset"});
  EXPECT_EQ(ReadFileBytes(s / "out/keep.txt"), "precious");
  ExpectOnlyEntries(s.path(), {"out"});
  GenerateOrFail(GenerateArgs(s / "ds", "50"));
  GenerateOrFail(GenerateArgs(s / "ds", "100", {"--force"}));
  EXPECT_EQ(Dataset::Open(s / "ds").meta().num_nodes, 100u);
  ExpectOnlyEntries(s.path(), {"ds", "out"});
}

TEST(GenerateCli, RefusesBadOptions) {
  ScratchDir s;
  ExpectInputError(RunStrata(GenerateArgs(s / "out", "1")), {"--nodes"});
  ExpectInputError(RunStrata(GenerateArgs(s / "out", "100", {"--graph", "ba"})), {"--graph"});
  ExpectInputError(RunStrata(GenerateArgs(s / "out", "100", {"--homophily", "1.5"})),
                   {"--homophily"});
  ExpectInputError(RunStrata({"generate", s / "out", "--nodes", "100"}), {});  // missing options
  ExpectOnlyEntries(s.path(), {});
}

// Generates into a 2 MiB tmpfs and expects `error` and nothing left behind.
void ExpectDiskFullLeavesNothing(const std::string& options, const std::string& error) {
  ScratchDir s;
  fs::create_directory(s / "mnt");
  std::string why;
  if (!testing::CanMountPrivateTmpfs(s / "mnt", &why)) {
    GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace: " << why;
  }
  std::string left;
  CommandResult r =
      testing::RunStrataInTinyTmpfs(s / "mnt", "generate \"$1/out\" --classes 4 " + options, &left);
  ExpectInputError(r, {error});
  EXPECT_EQ(left, "") << "left in the full file system";
}

TEST(GenerateCli, ReportsDiskFullAndLeavesNothingBehind) {
  // 20,000 rows of 4 features fit; a million edges' indices.bin does not.
  ExpectDiskFullLeavesNothing("--nodes 20000 --avg-degree 50 --feature-dim 4", "No space left");
}

TEST(GenerateCli, RefusesFeaturesTheDiskCannotHoldBeforeTheEdges) {
  ExpectDiskFullLeavesNothing("--nodes 20000 --avg-degree 10 --feature-dim 64",
                              "features.bin and graph/indptr.bin of 20000 nodes needs");
}

// Starts a generate job big enough to take seconds, signals it after ~300 ms, and expects
// exit status 130, one error line, and nothing left beside the output path.
void ExpectInterruptLeavesNothing(int signal_number) {
  ScratchDir s;
  fs::create_directory(s / "work");
  const std::string out = s / "work/out";
  std::vector<std::string> args = {STRATA_BINARY, "generate",     out,  "--nodes",
                                   "3000000",     "--avg-degree", "10", "--feature-dim",
                                   "64",          "--classes",    "8"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string err_path = s / "stderr.txt";
  const std::string out_path = s / "stdout.txt";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A test run in the background may inherit SIGINT ignored; give strata the defaults.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err_fd, 2);
    ::dup2(out_fd, 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int status = 0;
  pid_t done = ::waitpid(pid, &status, WNOHANG);
  ASSERT_EQ(done, 0) << "strata generate finished within 300 ms, before the signal; make the "
                        "job bigger. stderr: "
                     << ReadFileBytes(err_path);
  ASSERT_EQ(::kill(pid, signal_number), 0);
  const auto signalled = std::chrono::steady_clock::now();
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0) {
    if (std::chrono::steady_clock::now() - signalled > std::chrono::seconds(30)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "strata generate did not stop within 30 s of signal " << signal_number;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double stop_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - signalled)
          .count();
  int exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  CommandResult result;
  result.exit_status = exit_status;
  result.err = ReadFileBytes(err_path);
  EXPECT_EQ(exit_status, 130) << "signal " << signal_number << ", stderr: " << result.err;
  EXPECT_TRUE(WIFEXITED(status)) << "killed by the signal instead of cleaning up";
  EXPECT_EQ(result.err.rfind("strata: error: ", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_LT(stop_ms, 5000) << "took " << stop_ms << " ms to stop after the signal";
  ::testing::Test::RecordProperty("stop_ms", static_cast<int>(stop_ms));
  ExpectOnlyEntries(s / "work", {});
}

TEST(GenerateCli, SigintExits130AndLeavesNothingBehind) { ExpectInterruptLeavesNothing(SIGINT); }

TEST(GenerateCli, SigtermExits130AndLeavesNothingBehind) { ExpectInterruptLeavesNothing(SIGTERM); }

// A closed terminal: before, the staging directory was left behind.
TEST(GenerateCli, SighupExits130AndLeavesNothingBehind) { ExpectInterruptLeavesNothing(SIGHUP); }

}  // namespace
}  // namespace strata
