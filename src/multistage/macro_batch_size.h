// ChooseMacroBatch picks how many units (partitions, or mini-batches of seeds) a macro-batch
// holds, for both multistage loaders: half of what the budget has left goes to the two
// macro-batch buffers (the model, the batches in flight and evaluation need the rest).
//
// `candidates` ascend (every size from 1, or powers of two, up to the most that makes sense);
// `two_buffers_bytes(n)` is what two macro-batches of n units take and grows with n. With
// requested == 0 the answer is the largest candidate that fits; a requested size (clamped to
// the last candidate) is kept when it fits. Otherwise an input error in one line names the
// need, the room and the size that would fit.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "strata/memory_budget.h"

namespace strata {

struct MacroBatchUnit {
  std::string_view what;    // for the error, e.g. "--multistage partition"
  std::string_view unit;    // "partition", "mini-batch"
  std::string_view advice;  // "partition into more parts"
};

uint32_t ChooseMacroBatch(uint32_t requested, std::span<const uint32_t> candidates,
                          const std::function<uint64_t(uint32_t)>& two_buffers_bytes,
                          const MemoryBudget& budget, const MacroBatchUnit& unit);

}  // namespace strata
