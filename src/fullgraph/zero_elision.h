// Zero elision: a chunk of rows × width floats coded in place without its zero elements, for
// the full graph's intermediates on disk. ReLU and dropout leave most of a hidden layer's
// output zero (about three quarters with dropout 0.5), and so its gradient through them; those
// matrices are written once and read back whole, each pass a stream the disk's bandwidth
// bounds, so dropping the zeros from the transfers saves as much time, losslessly.
//
// The coded form: the nonzero values in row order, then, from the next 8-byte boundary, one bit
// per element in row order (element e = r × width + j is bit e % 64 of 64-bit word e / 64, set
// when it is stored). Only +0.0 is a zero: -0.0 and NaNs are stored, so decoding restores the
// chunk bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata {

// 64-bit words of the bits of rows × width elements.
inline uint64_t MaskWords(uint64_t rows, size_t width) { return (rows * width + 63) / 64; }

// Bytes of the coded form of a chunk with `nonzeros` stored values.
uint64_t ElidedBytes(uint64_t nonzeros, uint64_t rows, size_t width);

// Whether a chunk's first values (up to 1,024 of them) hold fewer zeros than 1 in 64, too few for
// eliding to pay (the bits alone cost 1 in 32): a dense matrix, such as a product of dense rows,
// then skips the pass that counts a chunk's zeros. A sample can misjudge a chunk whose zeros all
// come later; that costs bytes moved, never a value.
bool LooksDense(const float* values, uint64_t count);

// Each function runs AVX-512 kernels where the CPU has them, unless `vector` is false (the
// portable kernels, which give the same bytes; the tests compare them).

// Fills masks (MaskWords(rows, width) words) with the chunk's nonzero bits; returns their count.
uint64_t NonzeroMasks(const float* values, uint64_t rows, size_t width, uint64_t* masks,
                      bool vector = true);

// Codes the chunk in place from NonzeroMasks' masks: values then holds ElidedBytes(nonzeros,
// rows, width) bytes of coded form (the masks copied after the values), which must fit in the
// chunk's rows × width floats (an internal error otherwise).
void ElideZeros(float* values, uint64_t rows, size_t width, const uint64_t* masks,
                uint64_t nonzeros, bool vector = true);

// Decodes in place a chunk ElideZeros coded with `nonzeros` stored values, through `masks`
// (MaskWords(rows, width) words of scratch, not overlapping values' rows × width floats).
void RestoreZeros(float* values, uint64_t rows, size_t width, uint64_t* masks, uint64_t nonzeros,
                  bool vector = true);

// Writes rows [begin, end) of a chunk ElideZeros coded (rows × width elements, `nonzeros` stored
// values), zeros restored, to `out`, row r at out + (r - begin) × stride: straight into rows
// elsewhere (a column slice of full rows) rather than in place. The coded chunk is only read,
// so threads may each expand a range of its rows.
void ExpandRows(const float* coded, uint64_t rows, size_t width, uint64_t nonzeros, uint64_t begin,
                uint64_t end, float* out, size_t stride, bool vector = true);

}  // namespace strata
