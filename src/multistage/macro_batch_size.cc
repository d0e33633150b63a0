#include "multistage/macro_batch_size.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/error.h"

namespace strata {

uint32_t ChooseMacroBatch(uint32_t requested, std::span<const uint32_t> candidates,
                          const std::function<uint64_t(uint32_t)>& two_buffers_bytes,
                          const MemoryBudget& budget, const MacroBatchUnit& unit) {
  const uint64_t room = budget.available() / 2;
  auto largest_fit = [&] {
    uint32_t fits = 0;
    for (uint32_t n : candidates) {
      if (two_buffers_bytes(n) > room) break;
      fits = n;
    }
    return fits;
  };
  if (requested == 0) {
    const uint32_t fits = largest_fit();
    if (fits == 0) {
      // The buffers take half of what is left, so the budget must leave twice their size.
      throw Error::Input(fmt::format(
          "the memory budget is too small for {}: two buffers of one {} need {}, half of what "
          "the budget leaves is {}; raise --memory-budget to {} or {}",
          unit.what, unit.unit, FormatBytes(two_buffers_bytes(1)), FormatBytes(room),
          FormatBytesRoundedUp(budget.used() + 2 * two_buffers_bytes(1)), unit.advice));
    }
    return fits;
  }
  requested = std::min(requested, candidates.back());
  const uint64_t need = two_buffers_bytes(requested);
  if (need <= room) return requested;
  const uint32_t fits = largest_fit();
  throw Error::Input(fmt::format(
      "--macro-batch {} needs {} for its two buffers, half of what the budget leaves is {}: {}",
      requested, FormatBytes(need), FormatBytes(room),
      fits ? fmt::format("--macro-batch {} fits", fits)
           : fmt::format("raise --memory-budget to {}",
                         FormatBytesRoundedUp(budget.used() + 2 * need))));
}

}  // namespace strata
