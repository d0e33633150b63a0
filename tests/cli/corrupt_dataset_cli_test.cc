// A dataset's files are input: a corrupted one ends every command in one input error naming
// the file (exit 2), never in a crash. Each case overwrites a few bytes of one file of a good
// dataset and records the file's new checksum in meta.json, as a hand edit or a buggy writer
// would, so that only the checks on what the files mean can catch it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "storage/file.h"
#include "strata/dataset.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::RunStrata;
using testing::ScratchDir;

struct Corruption {
  const char* name;
  bool partitioned;  // of the partitioned copy of the dataset
  const char* file;  // relative to the dataset
  uint64_t element;  // which 4- or 8-byte value
  uint32_t width;
  uint64_t value;       // written there; kEndOfFile: the file's last value plus one
  const char* message;  // what the error says, beside the file's name
};

constexpr uint64_t kEndOfFile = ~uint64_t{0};

const Corruption kCorruptions[] = {
    {"IdBeyondTheNodes", false, "graph/indices.bin", 10, 4, 0x10000000, "element [10]"},
    {"DecreasingOffsets", false, "graph/indptr.bin", 5, 8, kEndOfFile, "decrease at row 5"},
    {"LabelBeyondTheClasses", false, "labels.bin", 71, 4, 16, "label 16"},
    {"SplitIdBeyondTheNodes", false, "split/val.bin", 3, 4, 0x7fffffff, "element [3]"},
    {"PartitionOffsetsBeyondTheNodes", true, "partition/offsets.bin", 1, 8, 0x10000000, "offsets"},
    {"HubIdBeyondTheNodes", true, "partition/hubs.bin", 0, 4, 0x10000000, "element [0]"},
    {"HubIdInTheHubSection", true, "partition/hub_indices.bin", 2, 4, 0x10000000, "element [2]"},
};

// Overwrites the value and records the file's new size and checksum in meta.json.
void Corrupt(const std::string& dir, const Corruption& c) {
  const std::string path = dir + "/" + c.file;
  std::string bytes = testing::ReadFileBytes(path);
  uint64_t value = c.value;
  if (value == kEndOfFile) {
    std::memcpy(&value, bytes.data() + bytes.size() - c.width, c.width);
    ++value;
  }
  ASSERT_LE((c.element + 1) * c.width, bytes.size()) << path;
  std::memcpy(bytes.data() + c.element * c.width, &value, c.width);
  testing::WriteTextFile(path, bytes);
  DatasetMeta meta = Dataset::Open(dir).meta();
  meta.files[c.file] = DigestFile(path);
  testing::WriteTextFile(dir + "/meta.json", meta.ToJson());
}

class CorruptDatasetCli : public ::testing::TestWithParam<Corruption> {
 protected:
  // One good dataset, its partitioned copy and a checkpoint trained on it, for all cases.
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    GenerateOptions o = testing::SmallGraph(*dir_ / "good", 2000, 16, 4);
    GenerateDataset(o);
    ASSERT_EQ(
        RunStrata({"partition", *dir_ / "good", *dir_ / "parted", "--parts", "4", "--hubs", "0.05"})
            .exit_status,
        0);
    const CommandResult trained =
        RunStrata({"train", *dir_ / "good", "--epochs", "1", "--checkpoint", *dir_ / "model.ckpt"});
    ASSERT_EQ(trained.exit_status, 0) << trained.err;
  }
  static void TearDownTestSuite() { delete dir_; }

  static ScratchDir* dir_;
};

ScratchDir* CorruptDatasetCli::dir_ = nullptr;

TEST_P(CorruptDatasetCli, EveryCommandEndsInOneErrorNamingTheFileOrSucceeds) {
  const Corruption& c = GetParam();
  ScratchDir scratch;
  const std::string ds = scratch / "ds";
  fs::copy(*dir_ / (c.partitioned ? "parted" : "good"), ds, fs::copy_options::recursive);
  Corrupt(ds, c);
  const std::string out = scratch / "out";
  // What each command does with the dataset; `reads` says whether it reads the corrupted file
  // (then it must refuse it) or may not (then it must succeed or refuse it, nothing else).
  struct Command {
    std::vector<std::string> args;
    bool reads;
  };
  const bool graph = std::string(c.file).starts_with("graph/");
  const bool partition = c.partitioned;
  std::vector<Command> commands = {
      {{"info", ds, "--verify"}, true},
      {{"train", ds, "--epochs", "1"}, !partition},
      {{"train", ds, "--epochs", "1", "--topology", "disk"}, !partition},
      {{"train", ds, "--epochs", "1", "--full-graph", "--model", "gcn"}, !partition},
      {{"eval", ds, "--checkpoint", *dir_ / "model.ckpt"}, !partition},
      {{"bench", "sample", ds}, graph},
      {{"export", ds, "--edge-list", out + ".txt"}, graph},
  };
  if (partition) {
    commands.push_back({{"train", ds, "--epochs", "1", "--multistage", "partition"}, true});
    commands.push_back(
        {{"train", ds, "--epochs", "1", "--multistage", "pbs", "--topology", "disk"}, true});
  } else {
    commands.push_back({{"partition", ds, out, "--parts", "4"}, graph});
  }
  for (const Command& command : commands) {
    SCOPED_TRACE(fmt::format("strata {}", fmt::join(command.args, " ")));
    const CommandResult r = RunStrata(command.args);
    if (command.reads || r.exit_status != 0) {
      testing::ExpectInputError(r, {c.file, c.message});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CorruptDatasetCli, ::testing::ValuesIn(kCorruptions),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace strata
