// IEEE 754 binary16 <-> binary32 conversion, the storage type of float16 feature files.
// FloatToHalf rounds to nearest even and keeps infinities and NaN; HalfToFloat is exact.
#pragma once

#include <cstdint>

namespace strata {

float HalfToFloat(uint16_t half);
uint16_t FloatToHalf(float value);

}  // namespace strata
