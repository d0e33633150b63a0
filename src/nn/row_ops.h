// Inline loops over one row of values, shared by the kernels' inner loops.
//
// The build targets x86-64-v2 at -O2, where GCC only vectorizes loops whose trip count is a
// known multiple of the vector width. So each loop runs in blocks of kRowBlock elements with a
// scalar tail; the kernels that call these carry target_clones (STRATA_NN_CLONES), so the
// blocks become AVX-512 or AVX2 instructions where the CPU has them. Each element is computed
// in the same order in every clone, and every thread of a process runs the same clone, so
// results do not depend on the thread count. They may differ in the last bit between CPUs of
// different vector ISAs (GCC contracts a * b + c into an FMA where the clone has one), as
// OpenBLAS's per-CPU kernels do anyway.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace strata {

// Clones for the hot kernels; "default" is the build's baseline. Clang (the fuzz build,
// fuzz/) cannot clone function templates, and a ThreadSanitizer build crashes in the clones'
// resolvers (they run at load time, before TSan's runtime is up), so there the kernels are
// built once, for the baseline.
#if defined(__clang__) || defined(STRATA_TSAN_BUILD)
#define STRATA_NN_CLONES
#else
#define STRATA_NN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

inline constexpr size_t kRowBlock = 16;

template <typename T>
inline void CopyRow(T* __restrict out, const T* __restrict x, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = x[i];
}

// out = x in vector moves, inlined: GCC turns CopyRow's loop into a memcpy call, which for a row
// of a few cache lines (a column slice's, a propagation's self term) costs about what the copy
// does. Blocks of kRowBlock elements, then the tail in halving pieces, each a copy of a
// constant size.
template <typename T>
inline void InlineCopyRow(T* __restrict out, const T* __restrict x, size_t n) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock)
    __builtin_memcpy(out + i, x + i, sizeof(T) * kRowBlock);
  for (size_t piece = kRowBlock / 2; piece > 0; piece /= 2) {
    if ((n - i) & piece) {
      __builtin_memcpy(out + i, x + i, sizeof(T) * piece);
      i += piece;
    }
  }
}

template <typename T>
inline void ZeroRow(T* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = T{0};
}

// acc += x
// (The tail starts at a bound computed from n, so that where n is a known multiple of
// kRowBlock, GCC sees the tail is empty rather than warning about its iterations.)
template <typename T>
inline void AddRow(T* __restrict acc, const T* __restrict x, size_t n) {
  const size_t blocks_end = n - n % kRowBlock;
  for (size_t i = 0; i < blocks_end; i += kRowBlock) {
    for (size_t j = 0; j < kRowBlock; ++j) acc[i + j] += x[i + j];
  }
  for (size_t i = blocks_end; i < n; ++i) acc[i] += x[i];
}

// acc += a * x
template <typename T>
inline void AxpyRow(T* __restrict acc, T a, const T* __restrict x, size_t n) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock) {
    for (size_t j = 0; j < kRowBlock; ++j) acc[i + j] += a * x[i + j];
  }
  for (; i < n; ++i) acc[i] += a * x[i];
}

// out = a * x
template <typename T>
inline void ScaledCopyRow(T* __restrict out, T a, const T* __restrict x, size_t n) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock) {
    for (size_t j = 0; j < kRowBlock; ++j) out[i + j] = a * x[i + j];
  }
  for (; i < n; ++i) out[i] = a * x[i];
}

// x *= a
template <typename T>
inline void ScaleRow(T* x, T a, size_t n) {
  const size_t blocks_end = n - n % kRowBlock;  // as AddRow's
  for (size_t i = 0; i < blocks_end; i += kRowBlock) {
    for (size_t j = 0; j < kRowBlock; ++j) x[i + j] *= a;
  }
  for (size_t i = blocks_end; i < n; ++i) x[i] *= a;
}

// Elementwise maps over rows: out[i] = op(a[i]) or op(a[i], b[i]), in blocks of kRowBlock with
// a constant trip count (which GCC vectorizes at -O2) and a scalar tail. op must capture no
// pointers: a pointer captured into a lambda loses __restrict, and the loop then needs an
// alias check that -O2 will not emit. Write selects inside op with KeepIf: under the default
// -ftrapping-math GCC keeps `c ? a * b : 0` a branch, which neither vectorizes nor predicts
// well on the random signs of activations. In-place forms take one pointer for a and out.
template <typename T, typename Op>
inline void Map1(const T* __restrict a, T* __restrict out, size_t n, Op op) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock) {
    for (size_t j = i; j < i + kRowBlock; ++j) out[j] = op(a[j]);
  }
  for (; i < n; ++i) out[i] = op(a[i]);
}
template <typename T, typename Op>
inline void Map1InPlace(T* out, size_t n, Op op) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock) {
    for (size_t j = i; j < i + kRowBlock; ++j) out[j] = op(out[j]);
  }
  for (; i < n; ++i) out[i] = op(out[i]);
}
template <typename T, typename Op>
inline void Map2(const T* __restrict a, const T* __restrict b, T* __restrict out, size_t n, Op op) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock) {
    for (size_t j = i; j < i + kRowBlock; ++j) out[j] = op(a[j], b[j]);
  }
  for (; i < n; ++i) out[i] = op(a[i], b[i]);
}
// out[i] = op(a[i], out[i])
template <typename T, typename Op>
inline void Map2InPlace(const T* __restrict a, T* __restrict out, size_t n, Op op) {
  size_t i = 0;
  for (; i + kRowBlock <= n; i += kRowBlock) {
    for (size_t j = i; j < i + kRowBlock; ++j) out[j] = op(a[j], out[j]);
  }
  for (; i < n; ++i) out[i] = op(a[i], out[i]);
}

// v where keep, else +0, by masking the bits: no branch, no conditional arithmetic.
template <typename T>
inline T KeepIf(bool keep, T v) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  return std::bit_cast<T>(std::bit_cast<Bits>(v) & (Bits{0} - static_cast<Bits>(keep)));
}

// ReLU's forward and backward on one element, for Map1 / Map2. Zeros come out as +0.
template <typename T>
inline T ReluOf(T x) {
  return KeepIf(x > T{0}, x);
}
// g where the forward output y was > 0.
template <typename T>
inline T MaskBy(T y, T g) {
  return KeepIf(y > T{0}, g);
}

// sum_i x[i] * y[i], accumulated left to right.
template <typename T>
inline T DotRow(const T* x, const T* y, size_t n) {
  T sum{0};
  for (size_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// Hints the cache to fetch a row that an upcoming iteration reads: sampled neighbour rows
// are scattered, so the hardware prefetchers cannot guess them.
template <typename T>
inline void PrefetchRow(const T* row, size_t n) {
  // Every cache line the row touches: a row that does not start on a line spills into one
  // more line than its length alone needs.
  const auto first = reinterpret_cast<uintptr_t>(row) & ~uintptr_t{63};
  const auto end = reinterpret_cast<uintptr_t>(row + n);
  for (uintptr_t line = first; line < end; line += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

}  // namespace strata
