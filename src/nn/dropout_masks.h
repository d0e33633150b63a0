// Dropout masks drawn from each row's own random stream, several rows at once.
//
// Row i of a matrix keeps column j when the j-th 16-bit draw of Rng(MixSeed(seed, key(i)))
// (four per 64-bit output, low bits first) is at least `threshold`, so a row's mask does not
// depend on how rows are split between threads or calls. A row's key is its index, counted from
// an offset, or one the caller gives per row (RowKeys). One stream is a chain of dependent steps;
// FillRowMasks steps kMaskRows streams side by side, which the vector clones run as one, and
// gives masks bit-identical to drawing each row alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace strata {

inline constexpr size_t kMaskRows = 8;

// The keys of a matrix's rows: by default row i's key is first + i (a matrix processed in row
// ranges then gets the masks of the whole, and the full graph's rows, node ids, are their own
// keys); or one key per row, given: a sampled batch's node ids, so that a node's mask depends
// on the node, not on where the batch lists it (nor on which data-parallel rank's share of the
// batch holds it).
class RowKeys {
 public:
  RowKeys(uint64_t first = 0) : first_(first) {}  // NOLINT: a row offset is the common case
  explicit RowKeys(std::span<const uint64_t> keys) : keys_(keys.data()), size_(keys.size()) {}

  uint64_t operator[](size_t i) const { return keys_ != nullptr ? keys_[i] : first_ + i; }
  // The keys of the rows from row i on.
  RowKeys From(size_t i) const {
    RowKeys from = *this;
    if (keys_ != nullptr) {
      from.keys_ += i;
      from.size_ -= i;
    } else {
      from.first_ += i;
    }
    return from;
  }
  // Whether there is a key for each of `rows` rows (counted ones always are).
  bool Covers(size_t rows) const { return keys_ == nullptr || rows <= size_; }

 private:
  uint64_t first_ = 0;
  const uint64_t* keys_ = nullptr;
  size_t size_ = 0;
};

// masks[r * cols + j] = scale where the row of key keys[r] keeps column first_column + j,
// else 0, for r < rows (at most kMaskRows): a column slice of the rows gets its columns of the
// whole rows' masks (the draws before first_column are stepped over, not stored).
template <typename T>
void FillRowMasks(uint64_t seed, RowKeys keys, size_t rows, size_t cols, uint32_t threshold,
                  T scale, T* masks, size_t first_column = 0);

}  // namespace strata
