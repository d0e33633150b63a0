#include "common/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace strata {
namespace {

// What `run` wrote to a ProgressBar's stream when it is not a terminal.
template <typename Run>
std::string LogLines(std::chrono::milliseconds interval, Run run) {
  std::FILE* file = std::tmpfile();
  run(ProgressOutput{file, /*terminal=*/false, interval});
  std::string text(std::ftell(file), '\0');
  std::rewind(file);
  EXPECT_EQ(std::fread(text.data(), 1, text.size(), file), text.size());
  std::fclose(file);
  return text;
}

TEST(ProgressBar, LogsPlainLinesWithAnEstimateWhenNotATerminal) {
  const std::string text = LogLines(std::chrono::milliseconds(0), [](ProgressOutput output) {
    ProgressBar bar("writing", 2000000, output);
    bar.Update(500000);
    bar.set_suffix("310 MB/s");
    bar.Update(2000000);
  });
  EXPECT_NE(text.find("writing:  25% 500.0K/2.0M in "), std::string::npos) << text;
  EXPECT_NE(text.find(", ETA "), std::string::npos) << text;
  EXPECT_NE(text.find("writing: 100% 2.0M/2.0M in "), std::string::npos) << text;
  EXPECT_NE(text.find("writing: done, 100% 2.0M/2.0M in "), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\r'), std::string::npos);  // no terminal control in a log
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(ProgressBar, AShortStageLeavesNoLine) {
  const std::string text = LogLines(std::chrono::milliseconds(60000), [](ProgressOutput output) {
    ProgressBar bar("importing", 0, output);
    for (uint64_t i = 0; i < 1000; ++i) bar.Update(i);
    bar.Restart("writing", 10);
    bar.Update(5);
  });
  EXPECT_EQ(text, "");
}

TEST(ProgressBar, CountsWithoutATotalHaveNoEstimate) {
  const std::string text = LogLines(std::chrono::milliseconds(0), [](ProgressOutput output) {
    ProgressBar bar("generating", 0, output);
    bar.Update(1500000000);
  });
  EXPECT_EQ(text.rfind("generating: 1.50G in ", 0), 0u) << text;
  EXPECT_EQ(text.find("ETA"), std::string::npos) << text;
}

}  // namespace
}  // namespace strata
