#include "common/float16.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

// Plain bit manipulation rather than F16C or _Float16: the release build targets x86-64-v2,
// which has neither, and the result must be bit-identical on every machine that reads a file.
// The array forms use F16C only when the CPU reports it, and its results are these.
//
// binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
// binary32: 1 sign bit, 8 exponent bits (bias 127), 23 mantissa bits.

namespace strata {

namespace {

constexpr int kHalfBias = 15;
constexpr int kFloatBias = 127;
constexpr int kMantissaShift = 23 - 10;  // float mantissa bits the half does not have

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t FloatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Shifts `significand` right by `shift` (1..31) and rounds the result to nearest, ties to even.
// A carry out of the top bit is left for the caller: in both uses it correctly bumps the
// exponent field (to the next binade, or from subnormal to the smallest normal, or to infinity).
uint32_t ShiftRightRoundEven(uint32_t significand, int shift) {
  uint32_t kept = significand >> shift;
  uint32_t rest = significand & ((uint32_t{1} << shift) - 1);
  uint32_t halfway = uint32_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1) != 0)) ++kept;
  return kept;
}

}  // namespace

float HalfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) {
    // Infinity, or NaN with its payload kept in the top mantissa bits, made quiet.
    const uint32_t quiet = mantissa != 0 ? 0x400000u : 0;
    return BitsToFloat(sign | 0x7f800000u | quiet | (mantissa << kMantissaShift));
  }
  if (exponent != 0) {
    uint32_t float_exponent = exponent - kHalfBias + kFloatBias;
    return BitsToFloat(sign | (float_exponent << 23) | (mantissa << kMantissaShift));
  }
  if (mantissa == 0) return BitsToFloat(sign);  // signed zero
  // Subnormal half, mantissa * 2^-24: every one is a normal float. Shift the leading one
  // into the implicit-bit position and lower the exponent by as much.
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  mantissa &= 0x3ffu;
  uint32_t float_exponent = static_cast<uint32_t>(1 - kHalfBias - shift + kFloatBias);
  return BitsToFloat(sign | (float_exponent << 23) | (mantissa << kMantissaShift));
}

uint16_t FloatToHalf(float value) {
  uint32_t bits = FloatToBits(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {
    if (mantissa == 0) return static_cast<uint16_t>(sign | 0x7c00u);
    // Keep the top of the payload, and set the quiet bit so that a payload living only in the
    // dropped low bits does not turn the NaN into infinity.
    return static_cast<uint16_t>(sign | 0x7c00u | 0x200u | (mantissa >> kMantissaShift));
  }
  int half_exponent = static_cast<int>(exponent) - kFloatBias + kHalfBias;
  if (half_exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16: overflow
  if (half_exponent >= 1) {
    uint32_t rest = (static_cast<uint32_t>(half_exponent) << 23) | mantissa;
    // Rounding the exponent and mantissa together lets a carry reach the exponent, and from
    // 65520 upwards reach 0x7c00, infinity, exactly as IEEE rounding requires.
    return static_cast<uint16_t>(sign | ShiftRightRoundEven(rest, kMantissaShift));
  }
  // The result is a subnormal half (or zero): value / 2^-24 rounded to an integer. Values
  // below 2^-25 round to zero; 2^-25 itself is a tie that goes to the even zero.
  if (half_exponent < -10) return static_cast<uint16_t>(sign);
  uint32_t significand = mantissa | 0x800000u;  // the implicit leading one
  // value = significand * 2^(exponent - 150), and 2^-24 units means a shift of 126 - exponent,
  // which is 14..24 here.
  int shift = 126 - static_cast<int>(exponent);
  return static_cast<uint16_t>(sign | ShiftRightRoundEven(significand, shift));
}

namespace {

__attribute__((target("avx,f16c"))) void HalvesToFloatsF16c(std::span<const uint16_t> in,
                                                            float* out) {
  size_t i = 0;
  for (; i + 8 <= in.size(); i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in.data() + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(half));
  }
  for (; i < in.size(); ++i) out[i] = HalfToFloat(in[i]);
}

__attribute__((target("avx,f16c"))) void FloatsToHalvesF16c(std::span<const float> in,
                                                            uint16_t* out) {
  size_t i = 0;
  for (; i + 8 <= in.size(); i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in.data() + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), half);
  }
  for (; i < in.size(); ++i) out[i] = FloatToHalf(in[i]);
}

// F16C from CPUID itself: clang's __builtin_cpu_supports does not know "f16c". "avx" also
// checks that the OS saves the YMM registers.
bool HasF16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0 &&
           __builtin_cpu_supports("avx");
  }();
  return has;
}

}  // namespace

void HalvesToFloats(std::span<const uint16_t> in, float* out) {
  if (HasF16c()) return HalvesToFloatsF16c(in, out);
  for (size_t i = 0; i < in.size(); ++i) out[i] = HalfToFloat(in[i]);
}

void FloatsToHalves(std::span<const float> in, uint16_t* out) {
  if (HasF16c()) return FloatsToHalvesF16c(in, out);
  for (size_t i = 0; i < in.size(); ++i) out[i] = FloatToHalf(in[i]);
}

}  // namespace strata
