// Little-endian integers of any width up to 8 bytes read out of a byte buffer, as file formats
// made elsewhere store them (.npy header lengths, ZIP records), whatever the host's order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata {

inline uint64_t LoadLittleEndian(const unsigned char* bytes, size_t count) {
  uint64_t value = 0;
  for (size_t i = count; i > 0; --i) value = (value << 8) | bytes[i - 1];
  return value;
}

}  // namespace strata
