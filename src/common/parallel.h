// ParallelFor splits [0, count) into `threads` contiguous ranges and runs fn(begin, end) on
// each, on the calling thread and the shared pool's workers (thread_pool.h). The first exception
// thrown is rethrown after all ranges finish. Work whose result must not depend on the thread count
// derives its random streams from item indices, never from the range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>

namespace strata {

void ParallelFor(unsigned threads, uint64_t count,
                 const std::function<void(uint64_t, uint64_t)>& fn);

// Threads to use by default: the machine's hardware threads.
inline unsigned DefaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace strata
