// IEEE 754 binary16 <-> binary32 conversion, the storage type of float16 feature files.
// FloatToHalf rounds to nearest even and keeps infinities and NaN; HalfToFloat is exact, but
// for a signalling NaN, which comes back quiet (as F16C returns it).
//
// The array forms convert with F16C's vcvtph2ps / vcvtps2ph where the CPU has it (eight values
// an instruction; streaming a 100M-node graph's float16 rows spent a third of its time in the
// scalar loop), else with the functions above: the same bits either way.
#pragma once

#include <cstdint>
#include <span>

namespace strata {

float HalfToFloat(uint16_t half);
uint16_t FloatToHalf(float value);

// out[i] = HalfToFloat(in[i]) / FloatToHalf(in[i]); out holds in.size() values.
void HalvesToFloats(std::span<const uint16_t> in, float* out);
void FloatsToHalves(std::span<const float> in, uint16_t* out);

}  // namespace strata
