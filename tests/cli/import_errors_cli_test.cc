// `strata import` on bad input: every failure exits 2 with one "strata: error: " line that
// names the file and the line or element, and leaves nothing behind (no OUT, no
// OUT.strata-tmp-* sibling) beside the inputs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::CommandResult;
using testing::EdgeArrays;
using testing::ExpectInputError;
using testing::ExpectOnlyEntries;
using testing::ReadFileBytes;
using testing::RunStrata;
using testing::ScratchDir;
using testing::WriteTextFile;
namespace fs = std::filesystem;

// An edge list of the small graph with line `line` (1-based) replaced by `text`.
std::string EdgeListWithLine(int line, const std::string& text) {
  EdgeArrays edges = testing::SmallEdges();
  std::string out;
  for (size_t i = 0; i < edges.size(); ++i) {
    if (static_cast<int>(i) + 1 == line) {
      out += text + "\n";
    } else {
      out += std::to_string(edges.src[i]) + " " + std::to_string(edges.dst[i]) + "\n";
    }
  }
  return out;
}

// Writes edges.txt and features.npy (6 rows, so N = 6) into `s` and imports them into s/out.
CommandResult ImportEdgeListWithFeatures(const ScratchDir& s, const std::string& edge_text) {
  WriteTextFile(s / "edges.txt", edge_text);
  testing::WriteFloat32Npy(s / "features.npy", {testing::kSmallNodes, testing::kSmallDim},
                           testing::SmallFeatures());
  return RunStrata(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--features", s / "features.npy"});
}

CommandResult ImportNpyDir(const ScratchDir& s) {
  return RunStrata({"import", s / "out", "--npy", s / "in"});
}

// ---- edge list ----

TEST(ImportCli, RefusesNegativeNodeIdInEdgeList) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, EdgeListWithLine(17, "-3 2"));
  ExpectInputError(r, {"edges.txt:17)", "-3", "negative"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

TEST(ImportCli, RefusesNodeIdAtLeastNumNodesInEdgeList) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, EdgeListWithLine(17, "0\t6"));
  ExpectInputError(r, {"edges.txt:17)", "node id 6", "num_nodes 6"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

// An edge list that alone sets the node count names its nodes 0..N-1: one id of 2^32 among two
// edges would write a 34 GB indptr, and is refused before anything is written.
TEST(ImportCli, RefusesAnIdFarBeyondWhatTheEdgesCanName) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 4294967296\n");
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "edges.txt"});
  ExpectInputError(r, {"edges.txt", "4294967296", "far beyond what 2 edges can name"});
  ExpectOnlyEntries(s.path(), {"edges.txt"});
}

TEST(ImportCli, RefusesNodeIdAtLeastLabelsLengthInEdgeList) {
  // Without features, the labels' length is N.
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n2 5\n");
  testing::WriteInt64Npy(s / "labels.npy", {5}, {0, 1, 0, 1, 0});
  CommandResult r = RunStrata(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--labels", s / "labels.npy"});
  ExpectInputError(r, {"edges.txt:3)", "node id 5", "num_nodes 5"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "labels.npy"});
}

// The class count is the largest label + 1: a label from another numbering would make a model of
// a million outputs, and is refused; a few classes with gaps are kept as they are.
TEST(ImportCli, RefusesLabelsThatJumpFarBeyondTheirClasses) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n2 3\n");
  testing::WriteInt64Npy(s / "labels.npy", {4}, {0, 1, 1000000, -1});
  CommandResult r = RunStrata(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--labels", s / "labels.npy"});
  ExpectInputError(r, {"labels.npy", "3 distinct classes", "1000000", "0..C-1"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "labels.npy"});
  testing::WriteInt64Npy(s / "labels.npy", {4}, {0, 1, 9, -1});
  ASSERT_EQ(
      RunStrata({"import", s / "out", "--edge-list", s / "edges.txt", "--labels", s / "labels.npy"})
          .exit_status,
      0);
  EXPECT_EQ(Dataset::Open(s / "out").meta().num_classes, 10u);
}

TEST(ImportCli, RefusesNonNumericTokenInEdgeList) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, EdgeListWithLine(5, "4 five"));
  ExpectInputError(r, {"edges.txt:5)", "five"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

TEST(ImportCli, RefusesNumberWithTrailingGarbageInEdgeList) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, EdgeListWithLine(9, "4 3x"));
  ExpectInputError(r, {"edges.txt:9)", "3x"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

TEST(ImportCli, RefusesExtraTokenInEdgeList) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, EdgeListWithLine(8, "1 2 3"));
  ExpectInputError(r, {"edges.txt:8)", "3"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

TEST(ImportCli, RefusesLineWithOneIdInEdgeList) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, EdgeListWithLine(3, "4   # half an edge"));
  ExpectInputError(r, {"edges.txt:3)"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

TEST(ImportCli, RefusesLastLineWithOneIdAndNoNewline) {
  ScratchDir s;
  CommandResult r = ImportEdgeListWithFeatures(s, "0 1\n1 2\n3");
  ExpectInputError(r, {"edges.txt:3)"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
}

TEST(ImportCli, RefusesEdgeListWithNoEdgesAndNoNodeCount) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "# nothing here\n\n");
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "edges.txt"});
  ExpectInputError(r, {"edges.txt"});
  ExpectOnlyEntries(s.path(), {"edges.txt"});
}

// ---- edge_index.npy ----

TEST(ImportCli, RefusesNegativeNodeIdInEdgeIndexNpy) {
  ScratchDir s;
  EdgeArrays edges = testing::SmallEdges();
  edges.src[9] = -2;
  testing::WriteSmallNpyDir(s / "in", edges);
  ExpectInputError(ImportNpyDir(s), {"edge_index.npy", "element [0, 9]", "-2", "negative"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesNodeIdAtLeastNumNodesInEdgeIndexNpy) {
  ScratchDir s;
  EdgeArrays edges = testing::SmallEdges();
  edges.dst[17] = 6;
  testing::WriteSmallNpyDir(s / "in", edges);
  ExpectInputError(ImportNpyDir(s), {"edge_index.npy", "element [1, 17]", "node id 6"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesEdgeIndexWithThreeRows) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  std::vector<int64_t> flat(3 * 4, 1);
  testing::WriteInt64Npy(s / "in/edge_index.npy", {3, 4}, flat);
  ExpectInputError(ImportNpyDir(s), {"edge_index.npy", "(3, 4)"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesFloatEdgeIndex) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteFloat32Npy(s / "in/edge_index.npy", {2, 2}, {0, 1, 1, 2});
  ExpectInputError(ImportNpyDir(s), {"edge_index.npy", "float32"});
  ExpectOnlyEntries(s.path(), {"in"});
}

// ---- broken .npy files ----

TEST(ImportCli, RefusesTruncatedNpy) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  std::string path = s / "in/features.npy";
  fs::resize_file(path, fs::file_size(path) - 10);  // cut into the data
  ExpectInputError(ImportNpyDir(s), {"features.npy", "truncated"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesCorruptNpyMagic) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  std::string path = s / "in/edge_index.npy";
  std::string bytes = ReadFileBytes(path);
  bytes[1] = 'X';  // "\x93XUMPY"
  WriteTextFile(path, bytes);
  ExpectInputError(ImportNpyDir(s), {"edge_index.npy", "magic"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesEmptyNpy) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  WriteTextFile(s / "in/labels.npy", "");
  ExpectInputError(ImportNpyDir(s), {"labels.npy"});
  ExpectOnlyEntries(s.path(), {"in"});
}

// ---- node data that does not fit the graph ----

TEST(ImportCli, RefusesFeatureRowsDifferentFromLabelsLength) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n");
  testing::WriteFloat32Npy(s / "features.npy", {6, testing::kSmallDim}, testing::SmallFeatures());
  testing::WriteInt64Npy(s / "labels.npy", {5}, {0, 1, 0, 1, 0});
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "edges.txt", "--features",
                               s / "features.npy", "--labels", s / "labels.npy"});
  ExpectInputError(r, {"labels.npy", "(5,)"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy", "labels.npy"});
}

TEST(ImportCli, RefusesLabelsLengthDifferentFromNumNodes) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/labels.npy", {7}, {0, 1, 2, 0, 1, 2, 0});
  ExpectInputError(ImportNpyDir(s), {"labels.npy", "(7,)"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesLabelBelowMinusOne) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/labels.npy", {6}, {0, 1, 2, -2, 1, 0});
  ExpectInputError(ImportNpyDir(s), {"labels.npy", "element [3]"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesSplitIdAtLeastNumNodes) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/train_idx.npy", {2}, {0, 6});
  ExpectInputError(ImportNpyDir(s), {"train_idx.npy", "element [1]", "node id 6"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesNegativeSplitId) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/test_idx.npy", {2}, {-1, 3});
  ExpectInputError(ImportNpyDir(s), {"test_idx.npy", "element [0]", "negative"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesRepeatedSplitId) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/val_idx.npy", {3}, {2, 5, 2});
  ExpectInputError(ImportNpyDir(s), {"val_idx.npy", "element [2]", "node id 2"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesANodeInTwoSplits) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/test_idx.npy", {2}, {3, 1});  // 1 is a training node
  ExpectInputError(ImportNpyDir(s), {"test_idx.npy", "element [1]", "node id 1", "overlap"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesFeaturesThatAreNotFiniteOrBeyondFloat16) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const float bad : {nan, inf, -inf}) {
    ScratchDir s;
    testing::WriteSmallNpyDir(s / "in");
    std::vector<float> features = testing::SmallFeatures();
    features[4 * testing::kSmallDim + 2] = bad;
    testing::WriteFloat32Npy(s / "in/features.npy", {testing::kSmallNodes, testing::kSmallDim},
                             features);
    ExpectInputError(ImportNpyDir(s), {"features.npy", "row 4, column 2", "not finite"});
    ExpectOnlyEntries(s.path(), {"in"});
  }
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  std::vector<float> features = testing::SmallFeatures();
  features[1] = 1e30f;
  testing::WriteFloat32Npy(s / "in/features.npy", {testing::kSmallNodes, testing::kSmallDim},
                           features);
  ExpectInputError(
      RunStrata({"import", s / "out", "--npy", s / "in", "--feature-dtype", "float16"}),
      {"features.npy", "row 0, column 1", "float16"});
  ExpectOnlyEntries(s.path(), {"in"});
  // float32 holds it.
  ASSERT_EQ(ImportNpyDir(s).exit_status, 0);
}

TEST(ImportCli, RefusesSplitIdOutOfRangeWithEdgeList) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n");
  fs::create_directory(s / "split");
  testing::WriteInt64Npy(s / "split/train_idx.npy", {1}, {3});  // N = 3 from the edge list
  CommandResult r =
      RunStrata({"import", s / "out", "--edge-list", s / "edges.txt", "--split", s / "split"});
  ExpectInputError(r, {"train_idx.npy", "element [0]"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "split"});
}

// ---- the output directory ----

TEST(ImportCli, RefusesExistingOutputWithoutForceAndLeavesItIntact) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  fs::create_directory(s / "out");
  WriteTextFile(s / "out/keep.txt", "precious");
  CommandResult r = ImportNpyDir(s);
  ExpectInputError(r, {"out", "--force"});
  ExpectOnlyEntries(s.path(), {"in", "out"});
  ExpectOnlyEntries(s / "out", {"keep.txt"});
  EXPECT_EQ(ReadFileBytes(s / "out/keep.txt"), "precious");
}

TEST(ImportCli, ForceReplacesAnExistingDataset) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n");
  ASSERT_EQ(RunStrata({"import", s / "out", "--edge-list", s / "edges.txt"}).exit_status, 0);
  testing::WriteSmallNpyDir(s / "in");
  CommandResult r = RunStrata({"import", s / "out", "--npy", s / "in", "--force"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  ExpectOnlyEntries(s.path(), {"edges.txt", "in", "out"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.num_nodes, testing::kSmallNodes);
  EXPECT_EQ(meta.num_edges, testing::kSmallDistinctEdges);
}

TEST(ImportCli, ForceRefusesToReplaceAFileOrAForeignDirectory) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  WriteTextFile(s / "out", "a file, not a dataset");
  ExpectInputError(ImportNpyDir(s), {"out", "--force"});
  ExpectInputError(RunStrata({"import", s / "out", "--npy", s / "in", "--force"}),
                   {"out", "not a directory"});
  EXPECT_EQ(ReadFileBytes(s / "out"), "a file, not a dataset");
  fs::create_directory(s / "dir");
  WriteTextFile(s / "dir/keep.txt", "precious");
  ExpectInputError(RunStrata({"import", s / "dir", "--npy", s / "in", "--force"}),
                   {"dir", "Strata dataset"});
  EXPECT_EQ(ReadFileBytes(s / "dir/keep.txt"), "precious");
  ExpectOnlyEntries(s.path(), {"dir", "in", "out"});
}

TEST(ImportCli, FailedForcedImportLeavesExistingOutputIntact) {
  ScratchDir s;
  EdgeArrays edges = testing::SmallEdges();
  edges.dst[17] = 99;
  testing::WriteSmallNpyDir(s / "in", edges);
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n");
  ASSERT_EQ(RunStrata({"import", s / "out", "--edge-list", s / "edges.txt"}).exit_status, 0);
  const DatasetMeta before = Dataset::Open(s / "out").meta();
  CommandResult r = RunStrata({"import", s / "out", "--npy", s / "in", "--force"});
  ExpectInputError(r, {"edge_index.npy", "element [1, 17]"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "in", "out"});
  EXPECT_TRUE(testing::SameDigests(before, Dataset::Open(s / "out").meta()));
}

TEST(ImportCli, RefusesOutputWhoseParentIsMissing) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  CommandResult r = RunStrata({"import", s / "no/such/out", "--npy", s / "in"});
  ExpectInputError(r, {"no/such/out"});
  ExpectOnlyEntries(s.path(), {"in"});
}

// ---- unreadable input ----

TEST(ImportCli, RefusesMissingEdgeListFile) {
  ScratchDir s;
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "missing.txt"});
  ExpectInputError(r, {"missing.txt"});
  ExpectOnlyEntries(s.path(), {});
}

TEST(ImportCli, RefusesNpyDirectoryWithoutFeatures) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  fs::remove(s / "in/features.npy");
  ExpectInputError(ImportNpyDir(s), {"features.npy"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesMissingNpyDirectory) {
  ScratchDir s;
  CommandResult r = RunStrata({"import", s / "out", "--npy", s / "nowhere"});
  ExpectInputError(r, {"nowhere"});
  ExpectOnlyEntries(s.path(), {});
}

// Runs strata unprivileged with the scratch directory opened up, so that it can still write
// the output beside the inputs.
CommandResult RunStrataUnprivileged(const ScratchDir& s, const std::vector<std::string>& args) {
  if (::geteuid() == 0) testing::OpenUpForNobody(s.path());
  return testing::RunStrataUnprivileged(args);
}

TEST(ImportCli, RefusesUnreadableEdgeList) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n");
  ASSERT_EQ(::chmod((s / "edges.txt").c_str(), 0), 0);
  CommandResult r = RunStrataUnprivileged(s, {"import", s / "out", "--edge-list", s / "edges.txt"});
  if (r.exit_status == 126) GTEST_SKIP() << "cannot drop privileges to run as nobody";
  ExpectInputError(r, {"edges.txt", "Permission denied"});
  ExpectOnlyEntries(s.path(), {"edges.txt"});
}

TEST(ImportCli, RefusesUnreadableFeaturesNpy) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ASSERT_EQ(::chmod((s / "in/features.npy").c_str(), 0), 0);
  CommandResult r = RunStrataUnprivileged(s, {"import", s / "out", "--npy", s / "in"});
  if (r.exit_status == 126) GTEST_SKIP() << "cannot drop privileges to run as nobody";
  ExpectInputError(r, {"features.npy", "Permission denied"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesUnwritableOutputDirectory) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  fs::create_directory(s / "ro");
  CommandResult r;
  if (::geteuid() == 0) {
    testing::OpenUpForNobody(s.path());
    fs::permissions(s / "ro", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
    r = testing::RunProgram({STRATA_BINARY, "import", s / "ro/out", "--npy", s / "in"}, 0,
                            testing::kNobody);
    if (r.exit_status == 126) GTEST_SKIP() << "cannot drop privileges to run as nobody";
  } else {
    fs::permissions(s / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    r = RunStrata({"import", s / "ro/out", "--npy", s / "in"});
  }
  ExpectInputError(r, {"ro/out", "Permission denied"});
  ExpectOnlyEntries(s / "ro", {});
  fs::permissions(s / "ro", fs::perms::owner_all);
}

// ---- usage ----

TEST(ImportCli, RefusesBothNpyAndEdgeList) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  WriteTextFile(s / "edges.txt", "0 1\n");
  CommandResult r =
      RunStrata({"import", s / "out", "--npy", s / "in", "--edge-list", s / "edges.txt"});
  ExpectInputError(r, {});
  ExpectOnlyEntries(s.path(), {"edges.txt", "in"});
}

TEST(ImportCli, RefusesBadMemoryBudget) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  CommandResult r = RunStrata({"import", s / "out", "--npy", s / "in", "--memory-budget", "lots"});
  ExpectInputError(r, {"--memory-budget"});
  ExpectOnlyEntries(s.path(), {"in"});
}

// ---- disk full ----

TEST(ImportCli, RefusesFeaturesTheDiskCannotHoldAndLeavesNothingBehind) {
  ScratchDir s;
  fs::create_directory(s / "mnt");
  std::string why;
  if (!testing::CanMountPrivateTmpfs(s / "mnt", &why)) {
    GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace: " << why;
  }
  // 1000 x 1024 float32 features: 3.91 MiB of features.bin, twice the file system.
  const uint64_t rows = 1000, dim = 1024;
  fs::create_directory(s / "in");
  std::vector<float> features(rows * dim, 0.5f);
  testing::WriteFloat32Npy(s / "in/features.npy", {rows, dim}, features);
  testing::WriteInt64Npy(s / "in/edge_index.npy", {2, 3}, {0, 1, 2, 1, 2, 999});
  std::string left;
  CommandResult r =
      testing::RunStrataInTinyTmpfs(s / "mnt", "import \"$1/out\" --npy '" + s / "in" + "'", &left);
  // Refused before a row is written.
  ExpectInputError(r, {"features.bin of 1000 rows needs 3.91 MiB on disk", "free"});
  EXPECT_EQ(left, "") << "left in the full file system";
  ExpectOnlyEntries(s / "mnt", {});  // outside the namespace the mount point stays empty
}

TEST(ImportCli, ReportsDiskFullWhileWritingTheGraph) {
  // 300k distinct edges of a text edge list: indices.bin alone is over 1 MiB, and the edge
  // list itself stays outside the tmpfs.
  ScratchDir s;
  fs::create_directory(s / "mnt");
  std::string why;
  if (!testing::CanMountPrivateTmpfs(s / "mnt", &why)) {
    GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace: " << why;
  }
  std::string text;
  for (int i = 0; i < 600000; ++i) {
    text += std::to_string(i % 1000) + " " + std::to_string(i / 1000 * 7 + i % 5) + "\n";
  }
  WriteTextFile(s / "edges.txt", text);
  std::string left;
  CommandResult r = testing::RunStrataInTinyTmpfs(
      s / "mnt", "import \"$1/out\" --edge-list '" + s / "edges.txt" + "'", &left);
  ExpectInputError(r, {"No space left"});
  EXPECT_EQ(left, "") << "left in the full file system";
}

// ---- inputs that imply absurd sizes ----

// Without --features or --labels, N is the largest id + 1; for id 2^64 - 1 that overflows.
// The importer must refuse the id rather than wrap N to 0 and write an indptr for 2^64 nodes.
// The file size cap keeps a broken importer from filling the disk.
TEST(ImportCli, RefusesLargestUint64IdInEdgeListWithoutNodeCount) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 18446744073709551615\n");
  CommandResult r = testing::RunStrataWithFileLimit(
      {"import", s / "out", "--edge-list", s / "edges.txt"}, uint64_t{16} << 20);
  ExpectInputError(r, {"edges.txt:2)", "18446744073709551615"});
  ExpectOnlyEntries(s.path(), {"edges.txt"});
}

// features.npy with 0 rows says N = 0: every id in the edge list is out of range. A zero row
// count must not be taken for "N unknown" (N = max id + 1), which publishes a dataset whose
// features.bin is too short for its num_nodes.
TEST(ImportCli, RefusesEdgeListWhenFeaturesHaveZeroRows) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n");
  testing::WriteFloat32Npy(s / "features.npy", {0, 3}, {});
  CommandResult r = testing::RunStrataWithFileLimit(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--features", s / "features.npy"},
      uint64_t{16} << 20);
  ExpectInputError(r, {"edges.txt:1)", "num_nodes 0"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "features.npy"});
  if (r.exit_status == 0) {
    // What was published is not even a dataset strata itself can open.
    CommandResult info = RunStrata({"info", s / "out", "--verify"});
    EXPECT_EQ(info.exit_status, 0) << "published dataset is unreadable: " << info.err;
  }
}

TEST(ImportCli, RefusesEdgeListWhenLabelsHaveZeroLength) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n");
  testing::WriteInt64Npy(s / "labels.npy", {0}, {});
  CommandResult r = testing::RunStrataWithFileLimit(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--labels", s / "labels.npy"},
      uint64_t{16} << 20);
  EXPECT_EQ(r.exit_status, 2) << r.err;
  ExpectOnlyEntries(s.path(), {"edges.txt", "labels.npy"});
}

TEST(ImportCli, ReportsLineNumberAfterManyBufferRefills) {
  // ~10 MiB of text: the bad line sits past the reader's first 8 MiB buffer.
  ScratchDir s;
  std::string text;
  for (int64_t i = 0; i < 700000; ++i) {
    text += std::to_string(i % 1000000 + 1000000) + " " +
            std::to_string((i * 7919) % 1000000 + 1000000) + "\n";
  }
  ASSERT_GT(text.size(), size_t{9} << 20);
  text += "5 -3\n";
  WriteTextFile(s / "edges.txt", text);
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "edges.txt"});
  ExpectInputError(r, {"edges.txt:700001)", "-3"});
  ExpectOnlyEntries(s.path(), {"edges.txt"});
}

TEST(ImportCli, RefusesNodeIdWidthOtherThanFourOrEight) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ExpectInputError(RunStrata({"import", s / "out", "--npy", s / "in", "--node-id-bytes", "3"}), {});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesIntegerFeatures) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/features.npy", {testing::kSmallNodes, 1}, {1, 2, 3, 4, 5, 6});
  ExpectInputError(ImportNpyDir(s), {"features.npy", "int64"});
  ExpectOnlyEntries(s.path(), {"in"});
}

TEST(ImportCli, RefusesSplitDirectoryWithoutSplits) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n");
  fs::create_directory(s / "split");
  CommandResult r =
      RunStrata({"import", s / "out", "--edge-list", s / "edges.txt", "--split", s / "split"});
  ExpectInputError(r, {"split"});
  ExpectOnlyEntries(s.path(), {"edges.txt", "split"});
}

TEST(ImportCli, RefusesDirectoryAsEdgeList) {
  ScratchDir s;
  fs::create_directory(s / "edges");
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "edges"});
  ExpectInputError(r, {"edges"});
  ExpectOnlyEntries(s.path(), {"edges"});
}

// ---- OGB ----

// A plain-text stand-in for a .csv.gz (the reader passes text through) with one bad line.
TEST(ImportCli, RefusesABadOgbEdgeLineInOneLine) {
  ScratchDir s;
  std::filesystem::create_directories(s / "ogbn-x/raw");
  std::filesystem::create_directories(s / "ogbn-x/split/random");
  WriteTextFile(s / "ogbn-x/raw/num-node-list.csv.gz", "4\n");
  WriteTextFile(s / "ogbn-x/raw/num-edge-list.csv.gz", "2\n");
  WriteTextFile(s / "ogbn-x/raw/edge.csv.gz", "0,1\n1;2\n");
  CommandResult r = RunStrata({"import", s / "out", "--ogb", s / "ogbn-x"});
  ExpectInputError(r, {"edge.csv.gz:line 2)", "expected 2 comma-separated node ids"});
  ExpectOnlyEntries(s.path(), {"ogbn-x"});
}

TEST(ImportCli, OgbSplitNeedsOgb) {
  ScratchDir s;
  CommandResult r = RunStrata({"import", s / "out", "--npy", s.path(), "--ogb-split", "time"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("--ogb-split requires --ogb"), std::string::npos) << r.err;
  ExpectOnlyEntries(s.path(), {});
}

}  // namespace
}  // namespace strata
