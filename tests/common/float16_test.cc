#include "common/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace strata {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

bool IsHalfNan(uint16_t half) { return (half & 0x7c00u) == 0x7c00u && (half & 0x3ffu) != 0; }

// The value of a finite half computed independently of HalfToFloat, from its definition.
double ReferenceHalfValue(uint16_t half) {
  int exponent = (half >> 10) & 0x1f;
  int mantissa = half & 0x3ff;
  double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 15 - 10);
  return (half & 0x8000u) != 0 ? -magnitude : magnitude;
}

TEST(Float16, HalfToFloatMatchesDefinitionForEveryFiniteHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    auto half = static_cast<uint16_t>(h);
    if ((half & 0x7c00u) == 0x7c00u) continue;
    float value = HalfToFloat(half);
    ASSERT_EQ(static_cast<double>(value), ReferenceHalfValue(half)) << "half 0x" << std::hex << h;
    ASSERT_EQ(std::signbit(value), (half & 0x8000u) != 0) << "half 0x" << std::hex << h;
  }
}

TEST(Float16, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    auto half = static_cast<uint16_t>(h);
    float value = HalfToFloat(half);
    uint16_t back = FloatToHalf(value);
    if (IsHalfNan(half)) {
      // A NaN may come back quieted, but it stays a NaN with its sign.
      ASSERT_TRUE(std::isnan(value)) << "half 0x" << std::hex << h;
      ASSERT_TRUE(IsHalfNan(back)) << "half 0x" << std::hex << h;
      ASSERT_EQ(back & 0x8000u, half & 0x8000u) << "half 0x" << std::hex << h;
    } else {
      ASSERT_EQ(back, half) << "half 0x" << std::hex << h;
    }
  }
}

TEST(Float16, SpecialValues) {
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(IsHalfNan(FloatToHalf(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload sits only in the low float bits must not become infinity.
  EXPECT_TRUE(IsHalfNan(FloatToHalf(FromBits(0x7f800001u))));
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
}

TEST(Float16, RoundsTiesToEven) {
  // Between 1 (mantissa 0, even) and 1 + 2^-10 (odd): the tie goes down.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // Between 1 + 2^-10 (odd) and 1 + 2^-9 (even): the tie goes up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just off the tie rounds to the nearer one.
  EXPECT_EQ(FloatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  EXPECT_EQ(FloatToHalf(std::nextafter(1.0f + 3 * std::ldexp(1.0f, -11), 0.0f)), 0x3c01);
  // A carry out of the mantissa moves to the next binade: 2 - 2^-12 rounds to 2.
  EXPECT_EQ(FloatToHalf(2.0f - std::ldexp(1.0f, -12)), 0x4000);
  EXPECT_EQ(FloatToHalf(-(2.0f - std::ldexp(1.0f, -12))), 0xc000);
}

TEST(Float16, EveryMidpointBetweenNeighbouringHalvesRoundsToEven) {
  // Positive finite halves in order are consecutive bit patterns; every midpoint between two
  // neighbours needs 12 significant bits, so it is exact in a float.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    float low = HalfToFloat(static_cast<uint16_t>(h));
    float high = HalfToFloat(static_cast<uint16_t>(h + 1));
    float mid = (low + high) / 2;
    ASSERT_GT(mid, low);
    ASSERT_LT(mid, high);
    uint16_t even = (h % 2 == 0) ? static_cast<uint16_t>(h) : static_cast<uint16_t>(h + 1);
    ASSERT_EQ(FloatToHalf(mid), even) << "half 0x" << std::hex << h;
    ASSERT_EQ(FloatToHalf(-mid), even | 0x8000u) << "half 0x" << std::hex << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), h) << "half 0x" << std::hex << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 1e9f)), h + 1) << "half 0x" << std::hex << h;
  }
}

TEST(Float16, OverflowsToInfinity) {
  // 65520 is the midpoint between 65504 (odd mantissa 0x3ff) and 65536, which is infinity.
  EXPECT_EQ(FloatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-65520.0f), 0xfc00);
  EXPECT_EQ(FloatToHalf(65536.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e30f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::max()), 0x7c00);
}

TEST(Float16, Subnormals) {
  const float kTiniest = std::ldexp(1.0f, -24);  // the smallest subnormal half
  EXPECT_EQ(FloatToHalf(kTiniest), 0x0001);
  EXPECT_EQ(HalfToFloat(0x0001), kTiniest);
  EXPECT_EQ(HalfToFloat(0x8001), -kTiniest);
  EXPECT_EQ(HalfToFloat(0x03ff), 1023 * kTiniest);        // the largest subnormal
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));  // the smallest normal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  // Half of the smallest subnormal is a tie between 0 and 1: zero is even.
  EXPECT_EQ(FloatToHalf(kTiniest / 2), 0x0000);
  EXPECT_EQ(FloatToHalf(-kTiniest / 2), 0x8000);
  EXPECT_EQ(FloatToHalf(std::nextafter(kTiniest / 2, 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(kTiniest / 4), 0x0000);
  // 1.5 * tiniest is a tie between 1 and 2: 2 is even. 2.5 * tiniest goes down to 2.
  EXPECT_EQ(FloatToHalf(1.5f * kTiniest), 0x0002);
  EXPECT_EQ(FloatToHalf(2.5f * kTiniest), 0x0002);
  // The largest subnormal plus half a step carries into the smallest normal.
  EXPECT_EQ(FloatToHalf(1023.5f * kTiniest), 0x0400);
  // Float subnormals are far below the half range.
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(Bits(HalfToFloat(0x8000)), 0x80000000u);
}

// The array forms (F16C where the CPU has it) give the scalar functions' bits: every half,
// and floats across the whole range (every exponent, ties, NaNs with payloads only in the low
// bits, signalling NaNs), in lengths that leave a tail past the eight-wide steps.
TEST(Float16, ArraysConvertBitForBitAsTheScalarFunctions) {
  std::vector<uint16_t> halves(65536 + 5);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> floats(halves.size());
  HalvesToFloats(halves, floats.data());
  for (size_t i = 0; i < halves.size(); ++i) {
    ASSERT_EQ(Bits(floats[i]), Bits(HalfToFloat(halves[i]))) << "half 0x" << std::hex << i;
  }
  std::vector<float> values;
  uint64_t state = 1;
  for (int i = 0; i < 200003; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    values.push_back(FromBits(static_cast<uint32_t>(state >> 32)));
  }
  for (uint32_t bits : {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7fa00000u, 0x477ff000u,
                        0x477fefffu, 0x33000000u, 0x33000001u}) {
    values.push_back(FromBits(bits));
  }
  std::vector<uint16_t> narrowed(values.size());
  FloatsToHalves(values, narrowed.data());
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(narrowed[i], FloatToHalf(values[i])) << "float 0x" << std::hex << Bits(values[i]);
  }
}

}  // namespace
}  // namespace strata
