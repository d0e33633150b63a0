#include "common/parallel.h"

#include "common/thread_pool.h"

namespace strata {

void ParallelFor(unsigned threads, uint64_t count,
                 const std::function<void(uint64_t, uint64_t)>& fn) {
  threads = std::max(1u, static_cast<unsigned>(std::min<uint64_t>(threads, count)));
  if (threads <= 1) {
    if (count > 0) fn(0, count);
    return;
  }
  ThreadPool::Shared().Run(threads,
                           [&](unsigned t) { fn(count * t / threads, count * (t + 1) / threads); });
}

}  // namespace strata
