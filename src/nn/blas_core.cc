#include "nn/blas_core.h"

#include <cblas.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <strings.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace strata {
namespace {

struct CoreLevel {
  const char* name;
  VectorIsa isa;
};

// Every x86 core of OpenBLAS 0.3.21's DYNAMIC_ARCH list (and SapphireRapids, which later ones
// add), by the instructions its kernels need.
constexpr std::array<CoreLevel, 22> kCoreLevels{{
    {"SapphireRapids", VectorIsa::kAvx512},
    {"Cooperlake", VectorIsa::kAvx512},
    {"SkylakeX", VectorIsa::kAvx512},
    {"Haswell", VectorIsa::kAvx2},
    {"Zen", VectorIsa::kAvx2},
    {"Excavator", VectorIsa::kAvx2},
    {"Sandybridge", VectorIsa::kAvx},
    {"Bulldozer", VectorIsa::kAvx},
    {"Piledriver", VectorIsa::kAvx},
    {"Steamroller", VectorIsa::kAvx},
    {"Nehalem", VectorIsa::kSse},
    {"Dunnington", VectorIsa::kSse},
    {"Penryn", VectorIsa::kSse},
    {"Core2", VectorIsa::kSse},
    {"Atom", VectorIsa::kSse},
    {"Prescott", VectorIsa::kSse},
    {"Barcelona", VectorIsa::kSse},
    {"Bobcat", VectorIsa::kSse},
    {"Opteron_SSE3", VectorIsa::kSse},
    {"Opteron", VectorIsa::kSse},
    {"Nano", VectorIsa::kSse},
    {"Northwood", VectorIsa::kSse},
}};

#if defined(__x86_64__) || defined(__i386__)
// XCR0: which register files the OS saves on a context switch. Without them the instructions
// exist but their registers would be lost, so the CPU's level is capped by what is saved.
uint64_t ExtendedControlRegister0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}
constexpr uint64_t kYmmState = 0x6;   // SSE and AVX registers
constexpr uint64_t kZmmState = 0xe6;  // + opmask and both halves of the 512-bit registers
#endif

// OpenBLAS's DYNAMIC_ARCH entry points that choose the kernel table: quit forgets the choice,
// init makes it again, reading OPENBLAS_CORETYPE. They are not in cblas.h; a library without
// them (built for one CPU, or not OpenBLAS) cannot switch. `library` finds the tables too.
struct CoreSelector {
  void* library = nullptr;  // a handle whose symbol search reaches OpenBLAS
  void (*quit)() = nullptr;
  void (*init)() = nullptr;

  // A core's kernel table is exported as gotoblas_<NAME>; forcing a name the library lacks
  // would make it complain on stderr and detect the CPU again.
  bool Knows(std::string_view core) const {
    std::string symbol = "gotoblas_";
    for (char c : core) symbol += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return dlsym(library, symbol.c_str()) != nullptr;
  }
};

std::optional<CoreSelector> FindCoreSelector() {
  auto find = [](void* library) {
    CoreSelector s;
    s.library = library;
    s.quit = reinterpret_cast<void (*)()>(dlsym(library, "gotoblas_dynamic_quit"));
    s.init = reinterpret_cast<void (*)()>(dlsym(library, "gotoblas_dynamic_init"));
    return s;
  };
  CoreSelector selector = find(RTLD_DEFAULT);
  if (selector.quit && selector.init) return selector;
  // Loaded privately (a Python extension module): ask the library cblas_sgemm comes from. The
  // handle is kept: it pins a library that stays loaded for the process's life anyway.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) == 0 || info.dli_fname == nullptr) {
    return std::nullopt;
  }
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return std::nullopt;
  selector = find(handle);
  if (selector.quit && selector.init) return selector;
  dlclose(handle);
  return std::nullopt;
}

// Re-chooses OpenBLAS's kernels as `core`, with OPENBLAS_CORETYPE restored afterwards so that
// child processes make their own choice.
void SwitchCore(const CoreSelector& selector, const std::string& core) {
  const char* inherited = std::getenv("OPENBLAS_CORETYPE");
  const std::optional<std::string> saved =
      inherited ? std::optional<std::string>(inherited) : std::nullopt;
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  selector.quit();
  selector.init();
  if (saved) {
    setenv("OPENBLAS_CORETYPE", saved->c_str(), 1);
  } else {
    unsetenv("OPENBLAS_CORETYPE");
  }
}

BlasCoreReport MatchOnce() {
  BlasCoreReport report;
  report.core = BlasCoreName();
  const char* policy = std::getenv("STRATA_BLAS_CORETYPE");
  if (policy != nullptr && std::string_view(policy) == "keep") return report;
  if (policy != nullptr && std::string_view(policy) != "auto") {
    report.note =
        fmt::format("STRATA_BLAS_CORETYPE={} is neither keep nor auto, so auto; ", policy);
  }
  const CpuVectorSupport cpu = DetectCpuVectorSupport();
  const std::vector<std::string> targets = MatchingBlasCores(report.core, cpu);
  if (targets.empty()) {
    if (!report.note.empty()) report.note.resize(report.note.size() - 2);  // the "; "
    return report;
  }

  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const std::string situation = fmt::format(
      "OpenBLAS runs its {} kernels ({}) on a CPU with {}", report.core,
      forced ? fmt::format("OPENBLAS_CORETYPE={}", forced) : std::string("its own choice"),
      VectorIsaName(cpu.isa));
  const std::optional<CoreSelector> selector = FindCoreSelector();
  std::string target;
  for (const std::string& core : targets) {
    if (selector && selector->Knows(core)) {
      target = core;
      break;
    }
  }
  if (target.empty()) {
    report.note += fmt::format(
        "{}, and this OpenBLAS cannot switch them; start with OPENBLAS_CORETYPE={} for the "
        "CPU's kernels",
        situation, targets.front());
    return report;
  }
  SwitchCore(*selector, target);
  report.replaced = std::exchange(report.core, BlasCoreName());
  report.note += fmt::format("{}: switched to {} (STRATA_BLAS_CORETYPE=keep keeps {})", situation,
                             report.core, report.replaced);
  return report;
}

}  // namespace

std::string_view VectorIsaName(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kSse:
      return "SSE";
    case VectorIsa::kAvx:
      return "AVX";
    case VectorIsa::kAvx2:
      return "AVX2";
    case VectorIsa::kAvx512:
      return "AVX-512";
  }
  return "?";
}

CpuVectorSupport DetectCpuVectorSupport() {
  CpuVectorSupport cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return cpu;
  const bool fma = (ecx & bit_FMA) != 0;
  if ((ecx & bit_OSXSAVE) == 0 || (ecx & bit_AVX) == 0) return cpu;
  const uint64_t xcr0 = ExtendedControlRegister0();
  if ((xcr0 & kYmmState) != kYmmState) return cpu;
  cpu.isa = VectorIsa::kAvx;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return cpu;
  if ((ebx & bit_AVX2) == 0 || !fma) return cpu;
  cpu.isa = VectorIsa::kAvx2;
  constexpr unsigned kAvx512Subsets =
      bit_AVX512F | bit_AVX512CD | bit_AVX512BW | bit_AVX512DQ | bit_AVX512VL;
  if ((ebx & kAvx512Subsets) != kAvx512Subsets || (xcr0 & kZmmState) != kZmmState) return cpu;
  cpu.isa = VectorIsa::kAvx512;
  const unsigned max_subleaf = eax;
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) {
    cpu.avx512_bf16 = (eax & bit_AVX512BF16) != 0;
  }
#endif
  return cpu;
}

std::optional<VectorIsa> BlasCoreIsa(std::string_view core) {
  for (const CoreLevel& level : kCoreLevels) {
    std::string_view name(level.name);
    if (name.size() == core.size() && strncasecmp(name.data(), core.data(), core.size()) == 0) {
      return level.isa;
    }
  }
  return std::nullopt;
}

std::vector<std::string> MatchingBlasCores(std::string_view current, CpuVectorSupport cpu) {
  const std::optional<VectorIsa> isa = BlasCoreIsa(current);
  if (!isa || *isa == cpu.isa) return {};
  switch (cpu.isa) {
    case VectorIsa::kAvx512:
      if (cpu.avx512_bf16) return {"Cooperlake", "SkylakeX"};
      return {"SkylakeX"};
    case VectorIsa::kAvx2:
      return {"Haswell"};
    case VectorIsa::kAvx:
      return {"Sandybridge"};
    case VectorIsa::kSse:
      return {"Prescott"};
  }
  return {};
}

const BlasCoreReport& MatchBlasCoreToCpu() {
  static std::once_flag once;
  static BlasCoreReport report;
  std::call_once(once, [] {
    report = MatchOnce();
    if (!report.note.empty()) std::fprintf(stderr, "strata: note: %s\n", report.note.c_str());
  });
  return report;
}

std::string BlasCoreName() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

}  // namespace strata
