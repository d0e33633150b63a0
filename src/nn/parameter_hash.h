// The xxh64 of a model's parameter values, row by row in parameter order: equal hashes mean
// (barring a 64-bit collision) bit-identical parameters. Data-parallel ranks compare theirs
// after each epoch; the full-graph runner keys its cached evaluation logits by it.
#pragma once

#include <cstdint>
#include <span>

#include "nn/parameter.h"

namespace strata {

uint64_t ParameterValuesHash(std::span<const Parameter> params);

}  // namespace strata
