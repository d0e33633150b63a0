// The table of an epoch's metrics: docs/training.md's "Epoch metrics" lists it row for row,
// keys are unique (a loader's under their last part too), the groups come in order, and the
// progress line shows the labelled fields a report has.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "strata/epoch_report.h"

namespace strata {
namespace {

std::string_view GroupName(EpochField::Group group) {
  switch (group) {
    case EpochField::Group::kEvery:
      return "every";
    case EpochField::Group::kMultistage:
      return "multistage";
    case EpochField::Group::kFullGraph:
      return "full graph";
    case EpochField::Group::kDataParallel:
      return "mpirun";
  }
  return "";
}

std::string_view UnitName(EpochField::Unit unit) {
  switch (unit) {
    case EpochField::Unit::kNone:
      return "";
    case EpochField::Unit::kCount:
      return "count";
    case EpochField::Unit::kSeconds:
      return "s";
    case EpochField::Unit::kBytes:
      return "bytes";
    case EpochField::Unit::kFraction:
      return "fraction";
    case EpochField::Unit::kPerSecond:
      return "per s";
    case EpochField::Unit::kMicroseconds:
      return "µs";
  }
  return "";
}

// The docs table as the field table makes it.
std::string ExpectedTable() {
  std::string table =
      "| field | path | unit | loader | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const EpochField& field : EpochFields()) {
    table += "| `" + std::string(field.key) + "` | " + std::string(GroupName(field.group)) + " | " +
             std::string(UnitName(field.unit)) + " | " + (field.loader ? "yes" : "") + " | " +
             std::string(field.meaning) + " |\n";
  }
  return table;
}

TEST(EpochFields, DocsTableListsEveryFieldInOrder) {
  std::ifstream docs(STRATA_SOURCE_DIR "/docs/training.md");
  ASSERT_TRUE(docs) << "docs/training.md";
  std::stringstream text;
  text << docs.rdbuf();
  const std::string expected = ExpectedTable();
  EXPECT_NE(text.str().find(expected), std::string::npos)
      << "docs/training.md's \"Epoch metrics\" table differs from EpochFields(); it should read:\n"
      << expected;
}

TEST(EpochFields, KeysAreUniqueAndGroupsInOrder) {
  std::set<std::string_view> keys, loader_keys;
  EpochField::Group last = EpochField::Group::kEvery;
  for (const EpochField& field : EpochFields()) {
    EXPECT_TRUE(keys.insert(field.key).second) << field.key;
    if (field.loader) {
      const std::string_view leaf = field.key.substr(field.key.rfind('.') + 1);
      EXPECT_TRUE(loader_keys.insert(leaf).second) << field.key;
    }
    EXPECT_GE(static_cast<int>(field.group), static_cast<int>(last)) << field.key;
    last = field.group;
  }
}

TEST(EpochFields, PathGroupsOnlyWhenTheirPathRan) {
  EpochReport report;
  size_t every = 0, all = EpochFields().size();
  for (const EpochField& field : EpochFields()) every += HasField(report, field);
  report.pipeline.multistage.emplace();
  report.full_graph.emplace();
  report.data_parallel.emplace();
  size_t with_groups = 0;
  for (const EpochField& field : EpochFields()) with_groups += HasField(report, field);
  EXPECT_LT(every, all);
  EXPECT_EQ(with_groups, all);
}

TEST(EpochFields, ProgressLineShowsTheLabelledFieldsBytesAsARate) {
  EpochReport report;
  report.time_s = 2;
  report.train_loss = 1.25;
  report.disk_bytes = 4'000'000;
  report.hit_rate = 0.5;
  report.stall_s = 1.5;
  EXPECT_EQ(ProgressLine(report), "loss 1.2500, disk 2 MB/s, hit rate 0.500, stall 1.5 s");
  report.pipeline.multistage.emplace().load_bytes = 8'000'000;
  EXPECT_EQ(ProgressLine(report),
            "loss 1.2500, disk 2 MB/s, hit rate 0.500, stall 1.5 s, load 4 MB/s");
}

}  // namespace
}  // namespace strata
