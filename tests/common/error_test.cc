#include "strata/error.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace strata {
namespace {

TEST(Error, EscapesTheControlBytesOfQuotedInput) {
  const std::string token("a\0b\x1b[31m\n\x7f\xc3\xa9", 12);
  const Error e = Error::Input("found '" + token + "'", "edges.txt", "2");
  // The NUL no longer ends the message early, the line stays one line, UTF-8 is kept.
  EXPECT_STREQ(e.what(), "found 'a\\x00b\\x1b[31m\\x0a\\x7f\xc3\xa9' (edges.txt:2)");
  EXPECT_EQ(EscapeControlBytes("plain text"), "plain text");
}

TEST(Error, CountsTheErrorsAUserCanFixAsInputErrors) {
  for (const int errnum : {ENOSPC, EACCES, ENOENT, EROFS, ENOTDIR, EISDIR, ENAMETOOLONG, ELOOP}) {
    EXPECT_EQ(Error::System("cannot open", "f", errnum).exit_status(), 2) << errnum;
  }
  EXPECT_EQ(Error::System("cannot read", "f", EIO).exit_status(), 1);
}

}  // namespace
}  // namespace strata
