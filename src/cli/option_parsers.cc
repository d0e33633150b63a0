#include "cli/option_parsers.h"

#include <fmt/format.h>

#include <sstream>

#include "strata/error.h"
#include "strata/memory_budget.h"

namespace strata::cli {

std::vector<int> ParseFanouts(const std::string& text, const std::string& option) {
  std::vector<int> fanouts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      int value = std::stoi(item, &used);
      if (used != item.size() || value < -1) throw std::invalid_argument(item);
      fanouts.push_back(value);
    } catch (const std::exception&) {
      throw Error::Input(fmt::format(
          "{} expects non-negative integers or -1 separated by commas, got '{}'", option, text));
    }
  }
  if (fanouts.empty()) throw Error::Input(fmt::format("{} is empty", option));
  return fanouts;
}

}  // namespace strata::cli
