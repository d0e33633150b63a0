// The OpenBLAS kernels ("core") that run Strata's dense products, matched to the CPU.
//
// OpenBLAS picks its kernels when it is loaded, from OPENBLAS_CORETYPE or the CPU's model
// number; a CPU newer than the library, or a variable inherited from another machine, gets
// kernels of an older instruction set (2.5x slower GEMM measured on an AVX-512 Xeon). Strata
// checks the CPU's vector extensions itself and re-initialises OpenBLAS's kernel table in place
// when they differ in level. The table is process-wide, so NumPy and PyTorch using the same
// library (Debian's do) switch too, whichever loaded it first. The first GEMM does this; the
// Python module does it when imported, before the user's threads run products.
#pragma once

#include <string>

namespace strata {

struct BlasCoreReport {
  std::string core;      // the core OpenBLAS runs now, e.g. "SkylakeX"
  std::string replaced;  // the core it ran before Strata switched; empty when unchanged
  std::string note;      // what was done or why nothing could be; empty when nothing was needed
};

// Matches OpenBLAS's core to the CPU once per process and returns what happened; later calls
// return the same report. The note, when there is one, is written once to stderr as
// "strata: note: ...". STRATA_BLAS_CORETYPE=keep in the environment keeps OpenBLAS's choice.
// Must not run while another thread is inside a BLAS call.
const BlasCoreReport& MatchBlasCoreToCpu();

}  // namespace strata
