// MonotonicNs: the steady clock in nanoseconds, for timing intervals (stage busy times, read
// latencies). Never goes backwards; its zero means nothing.
#pragma once

#include <chrono>
#include <cstdint>

namespace strata {

inline uint64_t MonotonicNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace strata
