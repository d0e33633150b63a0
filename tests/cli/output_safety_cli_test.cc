// Writers touch only their own output: a file output never replaces a device, pipe, socket,
// directory or symbolic link, and --force replaces only a Strata dataset (or an empty
// directory), never the command's own input nor a foreign directory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "cli_test_helpers.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::ExpectInputError;
using testing::RunStrata;
using testing::ScratchDir;

class OutputSafetyCli : public ::testing::Test {
 protected:
  void SetUp() override { GenerateDataset(testing::SmallGraph(dir_ / "ds", 200, 4, 3)); }
  ScratchDir dir_;
};

TEST_F(OutputSafetyCli, FileOutputsRefuseWhatIsNotARegularFile) {
  const std::string fifo = dir_ / "fifo", link = dir_ / "link", target = dir_ / "target";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  testing::WriteTextFile(target, "keep");
  fs::create_symlink(target, link);
  fs::create_directory(dir_ / "sub");
  for (const std::string& out : {fifo, link, dir_ / "sub"}) {
    SCOPED_TRACE(out);
    ExpectInputError(RunStrata({"export", dir_ / "ds", "--edge-list", out}),
                     {out, "not a regular file"});
    ExpectInputError(RunStrata({"train", dir_ / "ds", "--epochs", "1", "--metrics-out", out}),
                     {out, "not a regular file"});
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(testing::ReadFileBytes(target), "keep");
  // A regular file is replaced as before.
  testing::WriteTextFile(dir_ / "edges.txt", "old");
  EXPECT_EQ(RunStrata({"export", dir_ / "ds", "--edge-list", dir_ / "edges.txt"}).exit_status, 0);
}

TEST_F(OutputSafetyCli, ForceReplacesOnlyADatasetThatIsNotTheInput) {
  // Its own input: the arrays directory inside the output, and a dataset partitioned onto itself.
  const std::string parent = dir_ / "parent";
  testing::WriteSmallNpyDir(parent + "/inp");
  testing::WriteTextFile(parent + "/notes.txt", "mine");
  ExpectInputError(RunStrata({"import", parent, "--npy", parent + "/inp", "--force"}),
                   {parent, "Strata dataset"});
  ASSERT_EQ(RunStrata({"import", dir_ / "imported", "--npy", parent + "/inp"}).exit_status, 0);
  ExpectInputError(
      RunStrata({"partition", dir_ / "imported", dir_ / "imported", "--parts", "2", "--force"}),
      {"input", "not replacing it"});
  EXPECT_EQ(testing::ReadFileBytes(parent + "/notes.txt"), "mine");
  EXPECT_TRUE(fs::exists(parent + "/inp/edge_index.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "imported/meta.json"));
  // Not a directory, a link to a dataset: refused.
  testing::WriteTextFile(dir_ / "file", "keep");
  ExpectInputError(RunStrata({"generate", dir_ / "file", "--nodes", "50", "--avg-degree", "2",
                              "--feature-dim", "2", "--classes", "2", "--force"}),
                   {"not a directory"});
  fs::create_directory_symlink(dir_ / "ds", dir_ / "ds-link");
  ExpectInputError(RunStrata({"generate", dir_ / "ds-link", "--nodes", "50", "--avg-degree", "2",
                              "--feature-dim", "2", "--classes", "2", "--force"}),
                   {"symbolic link"});
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "file"), "keep");
  // A dataset and an empty directory are replaced.
  fs::create_directory(dir_ / "empty");
  for (const std::string& out : {dir_ / "ds", dir_ / "empty"}) {
    EXPECT_EQ(RunStrata({"generate", out, "--nodes", "50", "--avg-degree", "2", "--feature-dim",
                         "2", "--classes", "2", "--force"})
                  .exit_status,
              0);
    EXPECT_EQ(Dataset::Open(out).meta().num_nodes, 50u);
  }
}

TEST_F(OutputSafetyCli, RefusesAnOutputNameTooLongForItsTemporarySiblingAndACheckpointUnderAFile) {
  const std::string long_name = dir_ / std::string(240, 'a');
  ExpectInputError(RunStrata({"generate", long_name, "--nodes", "50", "--avg-degree", "2",
                              "--feature-dim", "2", "--classes", "2"}),
                   {"240 bytes", "at most"});
  EXPECT_FALSE(fs::exists(long_name));
  testing::WriteTextFile(dir_ / "file", "keep");
  ExpectInputError(
      RunStrata({"train", dir_ / "ds", "--epochs", "1", "--checkpoint", dir_ / "file/ckpt"}),
      {"checkpoint directory", "Not a directory"});
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "file"), "keep");
}

}  // namespace
}  // namespace strata
