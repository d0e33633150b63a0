#include "features/row_codec.h"

#include <cstring>

#include "common/float16.h"

namespace strata {

void DecodeRow(const std::byte* row, FeatureDtype dtype, std::span<float> out) {
  if (dtype == FeatureDtype::kFloat32) {
    std::memcpy(out.data(), row, out.size_bytes());
    return;
  }
  const auto* half = reinterpret_cast<const uint16_t*>(row);
  for (size_t i = 0; i < out.size(); ++i) out[i] = HalfToFloat(half[i]);
}

}  // namespace strata
