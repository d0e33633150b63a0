#include "strata/memory_budget.h"

#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <mutex>

#include "strata/error.h"

namespace strata {

namespace {

// glibc raises its mmap threshold to the largest block freed (up to 32 MiB); smaller blocks
// then come from per-thread heaps, which give free space back to the OS only from their top.
// A run whose batch and evaluation buffers come and go then holds tens to hundreds of MiB its
// budget has released. A fixed threshold keeps each block of 1 MiB or more mapped on its own
// and unmapped when freed. (Sanitizers bring their own allocator, which ignores it.)
void ReturnLargeBlocksWhenFreed() {
#if defined(M_MMAP_THRESHOLD) && !defined(STRATA_SANITIZED) && !defined(__SANITIZE_ADDRESS__)
  static std::once_flag once;
  std::call_once(once, [] {
    if (mallopt(M_MMAP_THRESHOLD, 1 << 20) == 0) {
      fmt::print(stderr,
                 "strata: note: the allocator refused a fixed mmap threshold; memory freed may "
                 "stay in the process\n");
    }
  });
#endif
}

}  // namespace

MemoryBudget::MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {
  ReturnLargeBlocksWhenFreed();
}

void MemoryBudget::Charge(uint64_t bytes, std::string_view what) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - used) {
      throw Error::Input(
          fmt::format("the memory budget of {} is too small: {} needs {} more, {} "
                      "is already in use; raise --memory-budget",
                      FormatBytes(limit_), what, FormatBytes(bytes), FormatBytes(used)));
    }
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  NotePeak(used + bytes);
}

void MemoryBudget::NotePeak(uint64_t used) {
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (used > peak && !peak_.compare_exchange_weak(peak, used, std::memory_order_relaxed)) {
  }
}

bool MemoryBudget::TryCharge(uint64_t bytes, uint64_t keep_free) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used > limit_ || bytes > limit_ - used || keep_free > limit_ - used - bytes) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  NotePeak(used + bytes);
  return true;
}

void MemoryBudget::Release(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

uint64_t ParseByteSize(std::string_view text, std::string_view option) {
  auto bad = [&] {
    return Error::Input(
        fmt::format("{} expects a size such as 512M or 4G, got '{}'", option, text));
  };
  std::string s(text);
  size_t pos = 0;
  double value;
  try {
    value = std::stod(s, &pos);
  } catch (...) {
    throw bad();
  }
  std::string unit = s.substr(pos);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b') && unit.size() > 1) {
    unit.pop_back();
  }
  if (!unit.empty() && (unit.back() == 'i')) unit.pop_back();
  double scale = 1;
  if (unit.size() > 1) throw bad();
  if (!unit.empty()) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'B':
        break;
      case 'K':
        scale = 0x1p10;
        break;
      case 'M':
        scale = 0x1p20;
        break;
      case 'G':
        scale = 0x1p30;
        break;
      case 'T':
        scale = 0x1p40;
        break;
      default:
        throw bad();
    }
  }
  double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes < 1 || bytes > 0x1p62) throw bad();
  return static_cast<uint64_t>(bytes);
}

uint64_t MemoryBudgetFromOption(std::string_view text) {
  if (text.empty()) return PhysicalMemoryBytes() / 4;
  return ParseByteSize(text, "--memory-budget");
}

namespace {

// How FormatBytes prints `bytes`: in the largest unit (up to TiB) it reaches, with 2 decimals
// below 10 of it, 1 below 100, else none; bytes plainly.
struct PrintedBytes {
  int unit = 0;             // index into kByteUnits
  uint64_t unit_bytes = 1;  // 1024^unit
  int decimals = 0;
};
constexpr const char* kByteUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};

PrintedBytes HowPrinted(uint64_t bytes) {
  PrintedBytes printed;
  while (printed.unit < 4 && bytes >= printed.unit_bytes * 1024) {
    printed.unit_bytes *= 1024;
    ++printed.unit;
  }
  const double value = static_cast<double>(bytes) / static_cast<double>(printed.unit_bytes);
  if (printed.unit > 0) printed.decimals = value < 10 ? 2 : (value < 100 ? 1 : 0);
  return printed;
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  const PrintedBytes printed = HowPrinted(bytes);
  if (printed.unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", static_cast<double>(bytes) / printed.unit_bytes,
                     printed.decimals, kByteUnits[printed.unit]);
}

std::string FormatBytesRoundedUp(uint64_t bytes) {
  // Rounded up to the printed precision; a carry into the next unit is printed in that unit.
  const PrintedBytes printed = HowPrinted(bytes);
  const double step = static_cast<double>(printed.unit_bytes) / std::pow(10.0, printed.decimals);
  return FormatBytes(static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / step) * step));
}

uint64_t PhysicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

uint64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

}  // namespace strata
