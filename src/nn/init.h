// Parameter initialisation. Glorot (Xavier) uniform draws every value from U(-a, a) with
// a = gain * sqrt(6 / (fan_in + fan_out)), in row-major order from Rng(seed): the same seed
// gives the same values on every machine and thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nn/matrix.h"

namespace strata {

template <typename T>
void GlorotUniform(MatrixSpan<T> values, size_t fan_in, size_t fan_out, uint64_t seed,
                   double gain = 1.0);

}  // namespace strata
