#include "nn/spgemm.h"

#include <algorithm>

#include "common/parallel.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kNoRow = ~uint64_t{0};

// A thread's accumulator over B's columns: `last_row[c]` says which output row last touched
// column c, so nothing is cleared between rows.
struct Accumulator {
  explicit Accumulator(uint64_t cols) : sum(cols, 0.0f), last_row(cols, kNoRow) {}
  std::vector<float> sum;
  std::vector<uint64_t> last_row;
  std::vector<uint32_t> touched;
};

uint64_t CountRow(const CsrView& a, const CsrView& b, uint64_t i, Accumulator& acc) {
  uint64_t count = 0;
  for (uint64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
    const uint32_t k = a.indices[e];
    for (uint64_t f = b.indptr[k]; f < b.indptr[k + 1]; ++f) {
      const uint32_t c = b.indices[f];
      if (acc.last_row[c] != i) {
        acc.last_row[c] = i;
        ++count;
      }
    }
  }
  return count;
}

void MultiplyRow(const CsrView& a, const CsrView& b, uint64_t i, Accumulator& acc,
                 uint32_t* columns, float* values) {
  acc.touched.clear();
  for (uint64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
    const uint32_t k = a.indices[e];
    const float x = a.values[e];
    for (uint64_t f = b.indptr[k]; f < b.indptr[k + 1]; ++f) {
      const uint32_t c = b.indices[f];
      if (acc.last_row[c] != i) {
        acc.last_row[c] = i;
        acc.sum[c] = x * b.values[f];
        acc.touched.push_back(c);
      } else {
        acc.sum[c] += x * b.values[f];
      }
    }
  }
  std::sort(acc.touched.begin(), acc.touched.end());
  for (size_t j = 0; j < acc.touched.size(); ++j) {
    columns[j] = acc.touched[j];
    values[j] = acc.sum[acc.touched[j]];
  }
}

void CheckShapes(const CsrView& a, const CsrView& b) {
  if (a.cols != b.rows || a.indptr.size() != a.rows + 1 || b.indptr.size() != b.rows + 1) {
    throw Error::Internal("SpGemm: A's columns are not B's rows");
  }
}

}  // namespace

void SpGemmSymbolic(const CsrView& a, const CsrView& b, std::span<uint64_t> c_indptr,
                    unsigned threads) {
  CheckShapes(a, b);
  c_indptr[0] = 0;
  // Each thread's range of rows gets its own accumulator, in each pass.
  ParallelFor(std::max(1u, threads), a.rows, [&](uint64_t begin, uint64_t end) {
    Accumulator acc(b.cols);
    for (uint64_t i = begin; i < end; ++i) c_indptr[i + 1] = CountRow(a, b, i, acc);
  });
  for (uint64_t i = 0; i < a.rows; ++i) c_indptr[i + 1] += c_indptr[i];
}

void SpGemmNumeric(const CsrView& a, const CsrView& b, std::span<const uint64_t> c_indptr,
                   std::span<uint32_t> c_indices, std::span<float> c_values, unsigned threads) {
  CheckShapes(a, b);
  ParallelFor(std::max(1u, threads), a.rows, [&](uint64_t begin, uint64_t end) {
    Accumulator acc(b.cols);
    for (uint64_t i = begin; i < end; ++i) {
      MultiplyRow(a, b, i, acc, c_indices.data() + c_indptr[i], c_values.data() + c_indptr[i]);
    }
  });
}

uint64_t SpGemmScratchBytes(uint64_t b_cols, unsigned threads) {
  // sum, last_row, and touched at its largest.
  return uint64_t{std::max(1u, threads)} * b_cols * (sizeof(float) + sizeof(uint64_t) + 4);
}

CsrMatrix SpGemm(const CsrView& a, const CsrView& b, unsigned threads) {
  CsrMatrix c;
  c.rows = a.rows;
  c.cols = b.cols;
  c.indptr.resize(a.rows + 1);
  SpGemmSymbolic(a, b, c.indptr, threads);
  c.indices.resize(c.indptr[a.rows]);
  c.values.resize(c.indptr[a.rows]);
  SpGemmNumeric(a, b, c.indptr, c.indices, c.values, threads);
  return c;
}

}  // namespace strata
