// The rules every multistage run's options obey, stated once for `strata train --multistage`
// and the Python MultistageLoader.
#pragma once

#include <cstddef>

#include "strata/train.h"

namespace strata {

// Throws an input error naming the option when `options` cannot describe macro-batches for a
// model of `layers` layers: a reuse outside 1..4 passes, or macro-batch fanouts that do not list
// one fanout per layer.
void CheckMultistageOptions(const MultistageOptions& options, size_t layers);

}  // namespace strata
