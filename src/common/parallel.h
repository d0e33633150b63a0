// ParallelFor splits [0, count) into `threads` contiguous ranges and runs fn(begin, end) on
// each, the first on the calling thread. The first exception thrown is rethrown after all
// ranges finish. Work whose result must not depend on the thread count derives its random
// streams from item indices, never from the range.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata {

inline void ParallelFor(unsigned threads, uint64_t count,
                        const std::function<void(uint64_t, uint64_t)>& fn) {
  threads = std::max(1u, static_cast<unsigned>(std::min<uint64_t>(threads, count)));
  if (threads <= 1) {
    if (count > 0) fn(0, count);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](uint64_t begin, uint64_t end) {
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t) {
    workers.emplace_back(run, count * t / threads, count * (t + 1) / threads);
  }
  run(0, count / threads);
  for (auto& w : workers) w.join();
  if (error) std::rethrow_exception(error);
}

// Threads to use by default: the machine's hardware threads.
inline unsigned DefaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace strata
