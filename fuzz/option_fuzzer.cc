// Fuzzes the command line's size and list arguments: --memory-budget's size ("1.5G", "512M")
// and the fanout lists of --fanouts and --eval-fanouts ("25,10,5", "-1").
#include <cstdint>
#include <string>

#include "cli/option_parsers.h"
#include "fuzz_support.h"
#include "strata/memory_budget.h"

namespace strata {

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::AcceptInputErrors([&] {
    for (int fanout : cli::ParseFanouts(text, "--fanouts")) {
      fuzz::Check(fanout > 0 || fanout == -1, "a fanout that is neither positive nor -1");
    }
  });
  // An empty --memory-budget means the default, a quarter of memory, which is no parse.
  if (text.empty()) return 0;
  fuzz::AcceptInputErrors([&] {
    uint64_t bytes = MemoryBudgetFromOption(text);
    fuzz::Check(bytes >= 1 && bytes <= (uint64_t{1} << 62), "a budget outside [1, 2^62]");
  });
  return 0;
}

}  // namespace strata
