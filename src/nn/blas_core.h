// How Strata matches OpenBLAS's kernels to the CPU (strata/blas_core.h says why): the CPU's
// level of vector extensions, the level each OpenBLAS core needs, and the core to switch to.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/blas_core.h"

namespace strata {

// Levels of x86 vector extensions, in the order OpenBLAS's kernels need them.
enum class VectorIsa { kSse = 0, kAvx = 1, kAvx2 = 2, kAvx512 = 3 };
std::string_view VectorIsaName(VectorIsa isa);  // "SSE", "AVX", "AVX2", "AVX-512"

struct CpuVectorSupport {
  // The widest level whose instructions the CPU has and whose registers the OS saves: AVX2
  // needs FMA too, AVX-512 the F, CD, BW, DQ and VL subsets that OpenBLAS's kernels use.
  VectorIsa isa = VectorIsa::kSse;
  bool avx512_bf16 = false;
};
// The running CPU's; kSse on a CPU that is not x86.
CpuVectorSupport DetectCpuVectorSupport();

// The level an OpenBLAS core's kernels need (names as openblas_get_corename() and
// OPENBLAS_CORETYPE spell them, any case); nullopt for a name Strata does not know, such as a
// newer library's cores, which are left alone.
std::optional<VectorIsa> BlasCoreIsa(std::string_view core);

// The cores to switch to, best first: none when `current` is unknown or of the CPU's level, else
// those of the CPU's level (Cooperlake then SkylakeX, Haswell, Sandybridge, Prescott), of which a
// library may lack the newest. A core newer than the CPU is replaced too: its kernels would stop
// the process with an illegal instruction.
std::vector<std::string> MatchingBlasCores(std::string_view current, CpuVectorSupport cpu);

// The core OpenBLAS runs now.
std::string BlasCoreName();

}  // namespace strata
