#include "fullgraph/zero_elision.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "strata/error.h"

namespace strata {
namespace {

uint64_t ValueBytes(uint64_t nonzeros) { return (nonzeros * sizeof(float) + 7) / 8 * 8; }

// The n <= 16 bits of elements [e, e + n).
inline unsigned BitsAt(const uint64_t* masks, uint64_t e, size_t n) {
  const uint64_t word = e / 64, shift = e % 64;
  uint64_t bits = masks[word] >> shift;
  if (shift + n > 64) bits |= masks[word + 1] << (64 - shift);
  return static_cast<unsigned>(bits & ((uint64_t{1} << n) - 1));
}

// Sets the bits of elements [e, e + n) to `bits` (the words zeroed before).
inline void SetBitsAt(uint64_t* masks, uint64_t e, size_t n, uint64_t bits) {
  const uint64_t word = e / 64, shift = e % 64;
  masks[word] |= bits << shift;
  if (shift + n > 64) masks[word + 1] |= bits >> (64 - shift);
}

// The first `count` of 16 lanes.
inline __mmask16 Leading(int count) { return static_cast<__mmask16>((1u << count) - 1); }

inline __mmask16 Inside(size_t width, size_t j) {
  return width - j >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (width - j)) - 1);
}

// Both directions move a row's values 16 columns at a time: compacting front to back, a
// group's values land at or before the first value not yet read; expanding back to front, a
// group lands at or after the last value not yet read (the values stored before element e
// number at most e). So the chunk is its own destination.

uint64_t NonzeroMasksScalar(const float* values, uint64_t rows, size_t width, uint64_t* masks) {
  uint64_t nonzeros = 0;
  for (uint64_t e = 0; e < rows * width; ++e) {
    uint32_t raw;
    std::memcpy(&raw, values + e, sizeof(raw));
    masks[e / 64] |= uint64_t{raw != 0} << (e % 64);
    nonzeros += raw != 0;
  }
  return nonzeros;
}

void CompactScalar(float* values, uint64_t rows, size_t width, const uint64_t* masks) {
  float* out = values;
  for (uint64_t e = 0; e < rows * width; ++e) {
    if ((masks[e / 64] >> (e % 64)) & 1) *out++ = values[e];
  }
}

void ExpandScalar(float* values, uint64_t rows, size_t width, const uint64_t* masks,
                  uint64_t nonzeros) {
  const float* in = values + nonzeros;  // one past the last stored value not yet placed
  for (uint64_t e = rows * width; e-- > 0;) {
    values[e] = (masks[e / 64] >> (e % 64)) & 1 ? *--in : 0.0f;
  }
}

__attribute__((target("avx512f"))) uint64_t NonzeroMasksAvx512(const float* values, uint64_t rows,
                                                               size_t width, uint64_t* masks) {
  uint64_t nonzeros = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < width; j += 16) {
      const __m512i v = _mm512_maskz_loadu_epi32(Inside(width, j), values + r * width + j);
      const __mmask16 stored = _mm512_test_epi32_mask(v, v);  // not all bits zero: not +0.0
      SetBitsAt(masks, r * width + j, std::min<size_t>(16, width - j), stored);
      nonzeros += std::popcount(static_cast<unsigned>(stored));
    }
  }
  return nonzeros;
}

__attribute__((target("avx512f"))) void CompactAvx512(float* values, uint64_t rows, size_t width,
                                                      const uint64_t* masks) {
  float* out = values;
  for (uint64_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < width; j += 16) {
      const uint64_t e = r * width + j;
      const __m512 v = _mm512_maskz_loadu_ps(Inside(width, j), values + e);
      const auto stored = static_cast<__mmask16>(BitsAt(masks, e, std::min<size_t>(16, width - j)));
      // Compressed in a register and stored under a mask: AMD's Zen cores microcode
      // compress-to-memory at about a hundred cycles.
      const int count = std::popcount(static_cast<unsigned>(stored));
      _mm512_mask_storeu_ps(out, Leading(count), _mm512_maskz_compress_ps(stored, v));
      out += count;
    }
  }
}

__attribute__((target("avx512f"))) void ExpandAvx512(float* values, uint64_t rows, size_t width,
                                                     const uint64_t* masks, uint64_t nonzeros) {
  const float* in = values + nonzeros;
  const size_t last_group = (width - 1) / 16 * 16;
  for (uint64_t r = rows; r-- > 0;) {
    for (size_t j = last_group + 16; j >= 16;) {
      j -= 16;
      const uint64_t e = r * width + j;
      const auto stored = static_cast<__mmask16>(BitsAt(masks, e, std::min<size_t>(16, width - j)));
      const int count = std::popcount(static_cast<unsigned>(stored));
      in -= count;
      const __m512 packed = _mm512_maskz_loadu_ps(Leading(count), in);
      _mm512_mask_storeu_ps(values + e, Inside(width, j), _mm512_maskz_expand_ps(stored, packed));
    }
  }
}

// A coded chunk's bits, where ElideZeros put them (after its values, in the chunk's floats):
// read a word at a time by memcpy, as they lie in memory of another type.
class CodedBits {
 public:
  explicit CodedBits(const std::byte* bits) : bits_(bits) {}
  uint64_t Word(uint64_t w) const {
    uint64_t word;
    std::memcpy(&word, bits_ + w * sizeof(word), sizeof(word));
    return word;
  }
  // The n <= 16 bits of elements [e, e + n), as BitsAt's.
  unsigned At(uint64_t e, size_t n) const {
    const uint64_t word = e / 64, shift = e % 64;
    uint64_t bits = Word(word) >> shift;
    if (shift + n > 64) bits |= Word(word + 1) << (64 - shift);
    return static_cast<unsigned>(bits & ((uint64_t{1} << n) - 1));
  }
  // The stored values before element e: the set bits below it.
  uint64_t Before(uint64_t e) const {
    uint64_t count = 0;
    for (uint64_t w = 0; w < e / 64; ++w) count += std::popcount(Word(w));
    if (e % 64 != 0) count += std::popcount(Word(e / 64) & ((uint64_t{1} << (e % 64)) - 1));
    return count;
  }

 private:
  const std::byte* bits_;
};

void ExpandRowsScalar(const float* in, size_t width, CodedBits bits, uint64_t begin, uint64_t end,
                      float* out, size_t stride) {
  for (uint64_t r = begin; r < end; ++r) {
    float* row = out + (r - begin) * stride;
    for (size_t j = 0; j < width; ++j) row[j] = bits.At(r * width + j, 1) ? *in++ : 0.0f;
  }
}

__attribute__((target("avx512f"))) void ExpandRowsAvx512(const float* in, size_t width,
                                                         CodedBits bits, uint64_t begin,
                                                         uint64_t end, float* out, size_t stride) {
  for (uint64_t r = begin; r < end; ++r) {
    float* row = out + (r - begin) * stride;
    for (size_t j = 0; j < width; j += 16) {
      const uint64_t e = r * width + j;
      const auto stored = static_cast<__mmask16>(bits.At(e, std::min<size_t>(16, width - j)));
      const int count = std::popcount(static_cast<unsigned>(stored));
      const __m512 packed = _mm512_maskz_loadu_ps(Leading(count), in);
      _mm512_mask_storeu_ps(row + j, Inside(width, j), _mm512_maskz_expand_ps(stored, packed));
      in += count;
    }
  }
}

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

}  // namespace

uint64_t ElidedBytes(uint64_t nonzeros, uint64_t rows, size_t width) {
  return ValueBytes(nonzeros) + MaskWords(rows, width) * sizeof(uint64_t);
}

bool LooksDense(const float* values, uint64_t count) {
  const uint64_t sample = std::min<uint64_t>(count, 1024);
  uint64_t zeros = 0;
  for (uint64_t e = 0; e < sample; ++e) {
    uint32_t raw;
    std::memcpy(&raw, values + e, sizeof(raw));
    zeros += raw == 0;
  }
  return zeros * 64 < sample;
}

uint64_t NonzeroMasks(const float* values, uint64_t rows, size_t width, uint64_t* masks,
                      bool vector) {
  std::fill_n(masks, MaskWords(rows, width), 0);
  return vector && HasAvx512() ? NonzeroMasksAvx512(values, rows, width, masks)
                               : NonzeroMasksScalar(values, rows, width, masks);
}

void ElideZeros(float* values, uint64_t rows, size_t width, const uint64_t* masks,
                uint64_t nonzeros, bool vector) {
  if (ElidedBytes(nonzeros, rows, width) > rows * width * sizeof(float)) {
    throw Error::Internal("ElideZeros: the coded chunk would not fit in its floats");
  }
  if (vector && HasAvx512()) {
    CompactAvx512(values, rows, width, masks);
  } else {
    CompactScalar(values, rows, width, masks);
  }
  std::memcpy(reinterpret_cast<std::byte*>(values) + ValueBytes(nonzeros), masks,
              MaskWords(rows, width) * sizeof(uint64_t));
}

void RestoreZeros(float* values, uint64_t rows, size_t width, uint64_t* masks, uint64_t nonzeros,
                  bool vector) {
  std::memcpy(masks, reinterpret_cast<const std::byte*>(values) + ValueBytes(nonzeros),
              MaskWords(rows, width) * sizeof(uint64_t));
  if (vector && HasAvx512()) {
    ExpandAvx512(values, rows, width, masks, nonzeros);
  } else {
    ExpandScalar(values, rows, width, masks, nonzeros);
  }
}

void ExpandRows(const float* coded, uint64_t rows, size_t width, uint64_t nonzeros, uint64_t begin,
                uint64_t end, float* out, size_t stride, bool vector) {
  if (begin > end || end > rows) throw Error::Internal("ExpandRows: rows outside the chunk");
  const CodedBits bits(reinterpret_cast<const std::byte*>(coded) + ValueBytes(nonzeros));
  const float* in = coded + bits.Before(begin * width);
  if (vector && HasAvx512()) {
    ExpandRowsAvx512(in, width, bits, begin, end, out, stride);
  } else {
    ExpandRowsScalar(in, width, bits, begin, end, out, stride);
  }
}

}  // namespace strata
