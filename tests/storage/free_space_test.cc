#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "storage/file.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

TEST(CheckFreeSpace, RefusesMoreThanTheFileSystemHasNamingWhatAndWhere) {
  testing::ScratchDir dir;
  CheckFreeSpace(dir.path(), 4096, "a page");
  try {
    CheckFreeSpace(dir.path(), uint64_t{1} << 62, "the graph of 2 nodes");
    FAIL() << "4 EiB fit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    const std::string message = e.what();
    EXPECT_NE(message.find("the graph of 2 nodes needs 4194304 TiB on disk"), std::string::npos)
        << message;
    EXPECT_NE(message.find(dir.path()), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace strata
