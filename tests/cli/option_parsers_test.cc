#include "cli/option_parsers.h"

#include <gtest/gtest.h>

#include "strata/error.h"
#include "strata/memory_budget.h"

namespace strata::cli {
namespace {

TEST(OptionParsers, ParsesFanouts) {
  EXPECT_EQ(ParseFanouts("15,10,5", "--fanouts"), (std::vector<int>{15, 10, 5}));
  EXPECT_EQ(ParseFanouts("-1", "--fanouts"), (std::vector<int>{-1}));
  EXPECT_THROW(ParseFanouts("15,x", "--fanouts"), Error);
  EXPECT_EQ(ParseFanouts("0,-1", "--fanouts"), (std::vector<int>{0, -1}));
  EXPECT_THROW(ParseFanouts("-2", "--fanouts"), Error);
  EXPECT_THROW(ParseFanouts("", "--fanouts"), Error);
}

TEST(OptionParsers, MemoryBudgetDefaultsToAQuarterOfMemory) {
  EXPECT_EQ(MemoryBudgetFromOption(""), PhysicalMemoryBytes() / 4);
  EXPECT_EQ(MemoryBudgetFromOption("1.5G"), uint64_t{3} << 29);
  try {
    MemoryBudgetFromOption("lots");
    FAIL() << "accepted 'lots'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("--memory-budget"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::cli
