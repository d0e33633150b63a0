// ParallelFor splits [0, count) into `threads` contiguous ranges and runs fn(begin, end) on
// each, on the calling thread and the shared pool's workers (thread_pool.h). The first exception
// thrown is rethrown after all ranges finish. Work whose result must not depend on the thread count
// derives its random streams from item indices, never from the range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>

#include "common/thread_pool.h"

namespace strata {

inline void ParallelFor(unsigned threads, uint64_t count,
                        const std::function<void(uint64_t, uint64_t)>& fn) {
  threads = std::max(1u, static_cast<unsigned>(std::min<uint64_t>(threads, count)));
  if (threads <= 1) {
    if (count > 0) fn(0, count);
    return;
  }
  ThreadPool::Shared().Run(threads,
                           [&](unsigned t) { fn(count * t / threads, count * (t + 1) / threads); });
}

// Threads to use by default: the machine's hardware threads.
inline unsigned DefaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace strata
