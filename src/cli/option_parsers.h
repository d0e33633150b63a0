// Parsers for the command line's list and size arguments, shared by the subcommands. They
// throw an input error naming the option on anything malformed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::cli {

// "15,10,5": fanouts, input layer first; each a positive integer or -1 (all neighbours).
std::vector<int> ParseFanouts(const std::string& text, const std::string& option);

// --memory-budget's text ("4G", "512M", ...); empty means a quarter of physical memory.
uint64_t MemoryBudgetFromOption(const std::string& text);

}  // namespace strata::cli
