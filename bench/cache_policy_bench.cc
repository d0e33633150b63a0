// Cache policies on the feature cache's access path: ns per access and hit rate on a Zipf(0.9)
// trace of 1M accesses with room for 100k rows, through the owner's loop (Contains; Touch on a
// hit; Evict when full and Insert on a miss). The *_WindowPinned variants pin, as window
// buffering does (GIDS §3.4), every resident key that the next `window` accesses will read.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/random.h"
#include "features/cache_policy.h"
#include "features/id_slot_map.h"

namespace strata {
namespace {

constexpr size_t kAccesses = 1000000;
constexpr size_t kCapacity = 100000;
constexpr uint32_t kNever = UINT32_MAX;

// A Zipf(0.9) trace over num_keys node ids, hot ids scattered through a random permutation; built
// once per num_keys and shared by every benchmark.
const std::vector<uint64_t>& ZipfTrace(size_t num_keys) {
  static std::map<size_t, std::vector<uint64_t>> traces;
  auto [it, inserted] = traces.try_emplace(num_keys);
  if (!inserted) return it->second;
  std::vector<double> cdf(num_keys);
  double total = 0;
  for (size_t r = 0; r < num_keys; ++r) cdf[r] = total += std::pow(double(r + 1), -0.9);
  std::vector<uint64_t> ids(num_keys);
  Rng rng(num_keys);
  for (size_t r = 0; r < num_keys; ++r) ids[r] = r;
  for (size_t i = num_keys; i > 1; --i) std::swap(ids[i - 1], ids[rng.Below(i)]);
  it->second.resize(kAccesses);
  for (uint64_t& key : it->second) {
    size_t rank = std::upper_bound(cdf.begin(), cdf.end(), rng.Uniform() * total) - cdf.begin();
    key = ids[std::min(rank, num_keys - 1)];
  }
  return it->second;
}

void SetCounters(benchmark::State& state, size_t hits, size_t evict_refusals) {
  state.SetItemsProcessed(state.iterations() * kAccesses);
  // Seconds per access, printed with an SI prefix (e.g. "33.2ns").
  state.counters["per_access"] =
      benchmark::Counter(double(kAccesses), benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
  state.counters["hit_rate"] = double(hits) / double(kAccesses);
  state.counters["evict_refusals"] = double(evict_refusals);
}

void BM_CachePolicyZipf(benchmark::State& state, CachePolicyKind kind) {
  const std::vector<uint64_t>& trace = ZipfTrace(static_cast<size_t>(state.range(0)));
  size_t hits = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<CachePolicy> policy = MakeCachePolicy(kind, kCapacity);
    hits = 0;
    state.ResumeTiming();
    for (uint64_t key : trace) {
      if (policy->Contains(key)) {
        policy->Touch(key);
        ++hits;
        continue;
      }
      if (policy->size() == kCapacity) policy->Evict(kNothingPinned);
      policy->Insert(key);
    }
    benchmark::DoNotOptimize(policy->size());
  }
  SetCounters(state, hits, 0);
}

void BM_CachePolicyZipfWindowPinned(benchmark::State& state, CachePolicyKind kind) {
  const size_t num_keys = static_cast<size_t>(state.range(0));
  const uint32_t window = static_cast<uint32_t>(state.range(1));
  const std::vector<uint64_t>& trace = ZipfTrace(num_keys);
  // next_use_of_access[i]: the next access of trace[i]'s key after i, kNever if none. The
  // sampler knows this for the next `window` accesses because it runs that far ahead.
  std::vector<uint32_t> next_use_of_access(trace.size());
  std::vector<uint32_t> next_use(num_keys, kNever);
  for (size_t i = trace.size(); i-- > 0;) {
    next_use_of_access[i] = next_use[trace[i]];
    next_use[trace[i]] = static_cast<uint32_t>(i);
  }
  size_t hits = 0, refusals = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<CachePolicy> policy = MakeCachePolicy(kind, kCapacity);
    std::fill(next_use.begin(), next_use.end(), kNever);
    hits = refusals = 0;
    state.ResumeTiming();
    for (uint32_t i = 0; i < trace.size(); ++i) {
      uint64_t key = trace[i];
      next_use[key] = next_use_of_access[i];
      if (policy->Contains(key)) {
        policy->Touch(key);
        ++hits;
        continue;
      }
      if (policy->size() == kCapacity) {
        uint64_t horizon = uint64_t{i} + window;
        auto is_pinned = [&](uint64_t k) { return next_use[k] <= horizon; };
        if (!policy->Evict(is_pinned)) {
          ++refusals;  // every row is wanted soon: read this one without caching it
          continue;
        }
      }
      policy->Insert(key);
    }
    benchmark::DoNotOptimize(policy->size());
  }
  SetCounters(state, hits, refusals);
}

// The floor under every policy: one IdSlotMap lookup per access over the same trace.
void BM_IdSlotMapFindZipf(benchmark::State& state) {
  const std::vector<uint64_t>& trace = ZipfTrace(static_cast<size_t>(state.range(0)));
  IdSlotMap map(kCapacity);
  for (uint64_t key : trace) {
    if (map.size() == kCapacity) break;
    if (!map.Contains(key)) map.Insert(key, static_cast<uint32_t>(map.size()));
  }
  size_t found = 0;
  for (auto _ : state) {
    found = 0;
    for (uint64_t key : trace) found += map.Find(key) != IdSlotMap::kNoSlot;
    benchmark::DoNotOptimize(found);
  }
  SetCounters(state, found, 0);
}

#define STRATA_POLICY_BENCH(policy, kind)                         \
  BENCHMARK_CAPTURE(BM_CachePolicyZipf, policy, kind)             \
      ->ArgName("keys")                                           \
      ->Arg(1 << 20)                                              \
      ->Arg(10 << 20)                                             \
      ->Unit(benchmark::kMillisecond);                            \
  BENCHMARK_CAPTURE(BM_CachePolicyZipfWindowPinned, policy, kind) \
      ->ArgNames({"keys", "window"})                              \
      ->Args({1 << 20, 10000})                                    \
      ->Args({1 << 20, 50000})                                    \
      ->Unit(benchmark::kMillisecond)

STRATA_POLICY_BENCH(clock, CachePolicyKind::kClock);
STRATA_POLICY_BENCH(sieve, CachePolicyKind::kSieve);
STRATA_POLICY_BENCH(s3fifo, CachePolicyKind::kS3Fifo);
BENCHMARK(BM_IdSlotMapFindZipf)->ArgName("keys")->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
