#include "storage/staging_name.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/staged_file.h"
#include "storage/staging_dir.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SortedNames(const std::string& dir) {
  std::vector<std::string> names = testing::ListDirectory(dir);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StagingName, TemplateNamesThisProcess) {
  EXPECT_EQ(StagingTemplate("/d/out"),
            "/d/out.strata-tmp-" + std::to_string(::getpid()) + "-XXXXXX");
}

// Only siblings of this output that no writer holds locked go, whatever pid their names carry
// (a writer in another PID namespace has a pid this one cannot see), provisional ones too (no
// writer holds the directory's shared lock, so their writers died before naming them); a locked
// sibling, another output's and names that merely look alike stay.
TEST(StagingName, RemovesOnlySiblingsNoWriterHolds) {
  testing::ScratchDir dir;
  fs::create_directories(dir / "out.strata-tmp-1-abc123/graph");
  testing::WriteTextFile(dir / "out.strata-tmp-1-abc123/graph/x.bin", "partial");
  testing::WriteTextFile(dir / "out.strata-tmp-2-zzz999", "partial file");
  testing::WriteTextFile(dir / "out.strata-tmp-1-def456", "being written");
  const StagingLock writing(dir / "out.strata-tmp-1-def456");
  testing::WriteTextFile(dir / "other.strata-tmp-2-ghi789", "another output's");
  testing::WriteTextFile(dir / "out.strata-new-young1", "left unnamed");
  fs::create_directory(dir / "out.strata-new-old111");
  fs::last_write_time(dir / "out.strata-new-old111",
                      fs::file_time_type::clock::now() - std::chrono::minutes(2));
  testing::WriteTextFile(dir / "outer.strata-tmp-2-jkl012", "a longer name's");
  testing::WriteTextFile(dir / "out", "the output");
  RemoveAbandonedStaging(dir / "out");
  EXPECT_EQ(SortedNames(dir.path()),
            (std::vector<std::string>{"other.strata-tmp-2-ghi789", "out", "out.strata-tmp-1-def456",
                                      "outer.strata-tmp-2-jkl012"}));
}

// A writer's own sibling is locked from before it has its staging name until the writer is done.
TEST(StagingName, AWritersSiblingIsLockedWhileItWrites) {
  testing::ScratchDir dir;
  StagingDir staging(dir / "data", false);
  RemoveAbandonedStaging(dir / "data");
  EXPECT_TRUE(fs::exists(staging.path()));
  EXPECT_EQ(staging.path().rfind(dir / "data.strata-tmp-" + std::to_string(::getpid()) + "-", 0),
            0u);
}

// Both writers clear what a killed writer of the same output left.
TEST(StagingName, WritersClearAbandonedSiblings) {
  testing::ScratchDir dir;
  testing::WriteTextFile(dir / "file.strata-tmp-1-aaaaaa", "partial");
  fs::create_directories(dir / "data.strata-tmp-1-bbbbbb");
  {
    StagedFile file(dir / "file");
    file.writer().Append("x", 1);
    file.Publish();
  }
  {
    StagingDir staging(dir / "data", false);
    staging.Publish();
  }
  EXPECT_EQ(SortedNames(dir.path()), (std::vector<std::string>{"data", "file"}));
}

}  // namespace
}  // namespace strata
