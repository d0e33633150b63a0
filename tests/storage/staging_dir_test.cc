#include "storage/staging_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "storage/file.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

TEST(StagingDir, RemovesEverythingWhenNotPublished) {
  testing::ScratchDir dir;
  {
    StagingDir staging(dir / "out", false);
    staging.MakeSubdir("graph");
    testing::WriteTextFile(staging / "graph/x.bin", "data");
  }
  EXPECT_TRUE(testing::ListDirectory(dir.path()).empty());
}

TEST(StagingDir, PublishMovesContentIntoPlace) {
  testing::ScratchDir dir;
  StagingDir staging(dir / "out", false);
  testing::WriteTextFile(staging / "a.txt", "new");
  staging.Publish();
  EXPECT_EQ(ReadWholeFile(dir / "out/a.txt"), "new");
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{"out"});
}

TEST(StagingDir, RefusesExistingOutputWithoutReplace) {
  testing::ScratchDir dir;
  fs::create_directory(dir / "out");
  try {
    StagingDir staging(dir / "out", false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos);
  }
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{"out"});
}

TEST(StagingDir, ReplacesExistingOutputAtomically) {
  testing::ScratchDir dir;
  fs::create_directory(dir / "out");
  testing::WriteTextFile(dir / "out/old.txt", "old");
  {
    StagingDir staging(dir / "out", true);
    testing::WriteTextFile(staging / "new.txt", "new");
    // Until published, the old content is untouched.
    EXPECT_TRUE(fs::exists(dir / "out/old.txt"));
    staging.Publish();
  }
  EXPECT_FALSE(fs::exists(dir / "out/old.txt"));
  EXPECT_EQ(ReadWholeFile(dir / "out/new.txt"), "new");
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{"out"});
}

TEST(StagingDir, RefusesMissingParent) {
  testing::ScratchDir dir;
  EXPECT_THROW(StagingDir(dir / "missing/out", false), Error);
}

}  // namespace
}  // namespace strata
