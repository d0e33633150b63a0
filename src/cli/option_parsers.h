// Parsers for the command line's list arguments, shared by the subcommands (sizes, such as
// --memory-budget, are strata/memory_budget.h's). They throw an input error naming the option on
// anything malformed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::cli {

// "15,10,5": fanouts, input layer first; each a count, 0 (no neighbours) or -1 (all of them).
std::vector<int> ParseFanouts(const std::string& text, const std::string& option);

}  // namespace strata::cli
