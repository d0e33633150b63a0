#include "nn/blas_core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nn/gemm.h"
#include "nn/matrix.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

using Cores = std::vector<std::string>;

constexpr CpuVectorSupport kAvx512Bf16{VectorIsa::kAvx512, true};
constexpr CpuVectorSupport kAvx512{VectorIsa::kAvx512, false};
constexpr CpuVectorSupport kAvx2{VectorIsa::kAvx2, false};
constexpr CpuVectorSupport kAvx{VectorIsa::kAvx, false};
constexpr CpuVectorSupport kSse{VectorIsa::kSse, false};

TEST(BlasCore, KnowsOpenBlasCoresInAnyCase) {
  EXPECT_EQ(BlasCoreIsa("Prescott"), VectorIsa::kSse);
  EXPECT_EQ(BlasCoreIsa("prescott"), VectorIsa::kSse);
  EXPECT_EQ(BlasCoreIsa("Opteron_SSE3"), VectorIsa::kSse);
  EXPECT_EQ(BlasCoreIsa("SANDYBRIDGE"), VectorIsa::kAvx);
  EXPECT_EQ(BlasCoreIsa("Zen"), VectorIsa::kAvx2);
  EXPECT_EQ(BlasCoreIsa("Haswell"), VectorIsa::kAvx2);
  EXPECT_EQ(BlasCoreIsa("SkylakeX"), VectorIsa::kAvx512);
  EXPECT_EQ(BlasCoreIsa("Cooperlake"), VectorIsa::kAvx512);
  EXPECT_EQ(BlasCoreIsa("Zen5"), std::nullopt);
  EXPECT_EQ(BlasCoreIsa("Opteron_SSE"), std::nullopt);
  EXPECT_EQ(BlasCoreIsa(""), std::nullopt);
}

TEST(BlasCore, OlderKernelsAreReplacedByTheCpusLevel) {
  EXPECT_EQ(MatchingBlasCores("Prescott", kAvx512), Cores({"SkylakeX"}));
  EXPECT_EQ(MatchingBlasCores("Prescott", kAvx512Bf16), Cores({"Cooperlake", "SkylakeX"}));
  EXPECT_EQ(MatchingBlasCores("Haswell", kAvx512), Cores({"SkylakeX"}));
  EXPECT_EQ(MatchingBlasCores("Zen", kAvx512Bf16), Cores({"Cooperlake", "SkylakeX"}));
  EXPECT_EQ(MatchingBlasCores("Nehalem", kAvx2), Cores({"Haswell"}));
  EXPECT_EQ(MatchingBlasCores("Core2", kAvx), Cores({"Sandybridge"}));
}

TEST(BlasCore, KernelsOfTheCpusLevelOrUnknownAreKept) {
  EXPECT_EQ(MatchingBlasCores("Zen", kAvx2), Cores());
  EXPECT_EQ(MatchingBlasCores("Haswell", kAvx2), Cores());
  EXPECT_EQ(MatchingBlasCores("SkylakeX", kAvx512Bf16), Cores());
  EXPECT_EQ(MatchingBlasCores("Cooperlake", kAvx512), Cores());
  EXPECT_EQ(MatchingBlasCores("Prescott", kSse), Cores());
  EXPECT_EQ(MatchingBlasCores("SapphireRapids2", kSse), Cores());
}

TEST(BlasCore, NewerKernelsThanTheCpuAreReplacedToo) {
  EXPECT_EQ(MatchingBlasCores("SkylakeX", kAvx2), Cores({"Haswell"}));
  EXPECT_EQ(MatchingBlasCores("Haswell", kAvx), Cores({"Sandybridge"}));
  EXPECT_EQ(MatchingBlasCores("Sandybridge", kSse), Cores({"Prescott"}));
}

#if defined(__x86_64__)
// GCC's and clang's own detection also checks what the OS saves (XCR0).
TEST(BlasCore, DetectionAgreesWithTheCompilersRuntime) {
  const CpuVectorSupport cpu = DetectCpuVectorSupport();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  EXPECT_EQ(cpu.isa >= VectorIsa::kAvx2, avx2);
  EXPECT_EQ(cpu.isa >= VectorIsa::kAvx, static_cast<bool>(__builtin_cpu_supports("avx")));
  if (cpu.isa == VectorIsa::kAvx512) {
    EXPECT_TRUE(__builtin_cpu_supports("avx512f"));
    EXPECT_TRUE(__builtin_cpu_supports("avx512bw"));
    EXPECT_TRUE(__builtin_cpu_supports("avx512vl"));
  } else {
    EXPECT_FALSE(cpu.avx512_bf16);
  }
}
#endif

// After the first GEMM (which matches the core), OpenBLAS runs kernels of the CPU's level, or
// the note says why not, and the products are still right.
TEST(BlasCore, AfterTheFirstGemmTheKernelsSuitTheCpu) {
  Matrix a(3, 2), b(2, 2), c(3, 2);
  for (size_t i = 0; i < 6; ++i) a.data()[i] = static_cast<float>(i);
  for (size_t i = 0; i < 4; ++i) b.data()[i] = static_cast<float>(i + 1);
  Gemm<float>(Trans::kNo, Trans::kNo, 1.0f, a.span(), b.span(), 0.0f, c.span());
  EXPECT_EQ(c(2, 0), 4.0f * 1 + 5.0f * 3);
  EXPECT_EQ(c(2, 1), 4.0f * 2 + 5.0f * 4);
  const BlasCoreReport& report = MatchBlasCoreToCpu();
  EXPECT_EQ(report.core, BlasCoreName());
  const char* policy = std::getenv("STRATA_BLAS_CORETYPE");
  if (policy != nullptr && std::string(policy) == "keep") GTEST_SKIP() << "kept by request";
  if (MatchingBlasCores(report.core, DetectCpuVectorSupport()).empty()) return;
  EXPECT_FALSE(report.note.empty()) << report.core;
}

// A core forced through the environment is replaced in a fresh process and announced once;
// STRATA_BLAS_CORETYPE=keep keeps it. Both report the core they ran in `bench step --json`.
TEST(BlasCore, BenchStepReplacesAForcedOlderCoreUnlessKept) {
  testing::ScratchDir dir;
  GenerateDataset(testing::SmallGraph(dir / "g", 500, 16, 3));
  const std::vector<std::string> bench = {
      STRATA_BINARY, "bench",     "step", dir / "g",   "--layers", "2",     "--hidden",
      "16",          "--fanouts", "5,5",  "--batches", "3",        "--json"};
  auto run = [&](std::vector<std::string> env) {
    env.insert(env.begin(), "env");
    env.insert(env.end(), bench.begin(), bench.end());
    return testing::RunCommand(env);
  };
  const testing::CommandResult forced = run({"OPENBLAS_CORETYPE=Prescott"});
  ASSERT_EQ(forced.exit_status, 0) << forced.err;
  const Cores expected = MatchingBlasCores("Prescott", DetectCpuVectorSupport());
  const std::string core = nlohmann::json::parse(forced.out)["blas_core"];
  if (expected.empty()) {
    EXPECT_EQ(core, "Prescott");
    EXPECT_EQ(forced.err, "");
  } else {
    EXPECT_NE(std::find(expected.begin(), expected.end(), core), expected.end()) << core;
    EXPECT_EQ(forced.err,
              "strata: note: OpenBLAS runs its Prescott kernels "
              "(OPENBLAS_CORETYPE=Prescott) on a CPU with " +
                  std::string(VectorIsaName(DetectCpuVectorSupport().isa)) + ": switched to " +
                  core + " (STRATA_BLAS_CORETYPE=keep keeps Prescott)\n");
  }
  const testing::CommandResult kept =
      run({"OPENBLAS_CORETYPE=Prescott", "STRATA_BLAS_CORETYPE=keep"});
  ASSERT_EQ(kept.exit_status, 0) << kept.err;
  EXPECT_EQ(nlohmann::json::parse(kept.out)["blas_core"], "Prescott");
  EXPECT_EQ(kept.err, "");
}

}  // namespace
}  // namespace strata
