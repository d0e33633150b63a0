#include "features/row_codec.h"

#include <cstring>

#include "common/float16.h"

namespace strata {

void DecodeRow(const std::byte* row, FeatureDtype dtype, std::span<float> out) {
  if (dtype == FeatureDtype::kFloat32) {
    std::memcpy(out.data(), row, out.size_bytes());
    return;
  }
  HalvesToFloats({reinterpret_cast<const uint16_t*>(row), out.size()}, out.data());
}

}  // namespace strata
