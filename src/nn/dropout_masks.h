// Dropout masks drawn from each row's own random stream, several rows at once.
//
// Row i of a matrix keeps column j when the j-th 16-bit draw of Rng(MixSeed(seed, i)) (four
// per 64-bit output, low bits first) is at least `threshold`, so a row's mask does not depend
// on how rows are split between threads or calls. One stream is a chain of dependent steps;
// FillRowMasks steps kMaskRows streams side by side, which the vector clones run as one, and
// gives masks bit-identical to drawing each row alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata {

inline constexpr size_t kMaskRows = 8;

// masks[r * cols + j] = scale where row first_row + r keeps column j, else 0, for r < rows
// (at most kMaskRows).
template <typename T>
void FillRowMasks(uint64_t seed, uint64_t first_row, size_t rows, size_t cols, uint32_t threshold,
                  T scale, T* masks);

}  // namespace strata
