#include "storage/staging_name.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// The pid of a process that has exited and been reaped: no process has it for a while.
pid_t ExitedPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST(StagingName, TemplateNamesThisProcess) {
  EXPECT_EQ(StagingTemplate("/d/out"),
            "/d/out.strata-tmp-" + std::to_string(::getpid()) + "-XXXXXX");
}

// Only siblings of this output whose writer has exited go; a live writer's, another
// output's and names that merely look alike stay.
TEST(StagingName, RemovesOnlyAbandonedSiblings) {
  testing::ScratchDir dir;
  const std::string dead = std::to_string(ExitedPid());
  const std::string live = std::to_string(::getpid());
  fs::create_directories(dir / ("out.strata-tmp-" + dead + "-abc123/graph"));
  testing::WriteTextFile(dir / ("out.strata-tmp-" + dead + "-abc123/graph/x.bin"), "partial");
  testing::WriteTextFile(dir / ("out.strata-tmp-" + dead + "-zzz999"), "partial file");
  testing::WriteTextFile(dir / ("out.strata-tmp-" + live + "-def456"), "being written");
  testing::WriteTextFile(dir / ("other.strata-tmp-" + dead + "-ghi789"), "another output's");
  testing::WriteTextFile(dir / "out.strata-tmp-XYZ123", "no pid");
  testing::WriteTextFile(dir / "out", "the output");
  RemoveAbandonedStaging(dir / "out");
  EXPECT_EQ(
      SortedNames(dir.path()),
      (std::vector<std::string>{"other.strata-tmp-" + dead + "-ghi789", "out",
                                "out.strata-tmp-" + live + "-def456", "out.strata-tmp-XYZ123"}));
}

// Both writers clear what a killed writer of the same output left.
TEST(StagingName, WritersClearAbandonedSiblings) {
  testing::ScratchDir dir;
  const std::string dead = std::to_string(ExitedPid());
  testing::WriteTextFile(dir / ("file.strata-tmp-" + dead + "-aaaaaa"), "partial");
  fs::create_directories(dir / ("data.strata-tmp-" + dead + "-bbbbbb"));
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
