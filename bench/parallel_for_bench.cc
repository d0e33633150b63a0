// What one ParallelFor call costs beside its work: through the shared pool (thread_pool.h)
// against the thread started and joined per call that it replaced, on an empty range and on a
// row group's worth of work (the full-graph input products call it per 128 rows).
#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/parallel.h"

namespace strata {
namespace {

// `spins` steps of a multiply-add chain: 10,000 are about 10 µs.
void Work(uint64_t begin, uint64_t end, std::atomic<uint64_t>& sink, int64_t spins) {
  uint64_t x = begin ^ end;
  for (int64_t i = 0; i < spins; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  sink.fetch_add(x, std::memory_order_relaxed);
}

// Calls launch(threads, part) per iteration; part(begin, end) does range(1) steps of work.
template <typename Launch>
void RunCalls(benchmark::State& state, Launch launch) {
  const auto threads = static_cast<unsigned>(state.range(0));
  std::atomic<uint64_t> sink{0};
  auto part = [&](uint64_t begin, uint64_t end) { Work(begin, end, sink, state.range(1)); };
  for (auto _ : state) launch(threads, part);
  benchmark::DoNotOptimize(sink.load());
}

void BM_ParallelForPool(benchmark::State& state) {
  RunCalls(state, [](unsigned threads, const auto& part) { ParallelFor(threads, threads, part); });
}

// The replaced scheme: a std::thread per range but the first, joined before returning.
void BM_ParallelForThreadPerCall(benchmark::State& state) {
  RunCalls(state, [](unsigned threads, const auto& part) {
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < threads; ++t) workers.emplace_back(part, t, t + 1);
    part(0, 1);
    for (std::thread& w : workers) w.join();
  });
}

void Shapes(benchmark::internal::Benchmark* b) {
  // 16 threads: what a many-core machine sees (on the 2-core machine, 8 threads per core).
  b->Args({2, 0})->Args({2, 10000})->Args({4, 0})->Args({16, 0})->Args({16, 10000});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_ParallelForPool)->Apply(Shapes);
BENCHMARK(BM_ParallelForThreadPerCall)->Apply(Shapes);

}  // namespace
}  // namespace strata
