#include "minibatch/storage_access_accumulator.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

constexpr uint64_t kMs = 1000000;

// Feeds `batches` batches over `ms` milliseconds at `iops` reads/s with `latency_us` each.
void Feed(StorageAccessAccumulator& acc, uint64_t& now, uint64_t& reads, uint64_t& latency,
          int batches, uint64_t ms, double iops, double latency_us) {
  for (int b = 0; b < batches; ++b) {
    const uint64_t step_ns = ms * kMs / batches;
    const auto done = static_cast<uint64_t>(iops * step_ns * 1e-9);
    now += step_ns;
    reads += done;
    latency += static_cast<uint64_t>(done * latency_us * 1000);
    acc.Observe(now, reads, latency);
  }
}

TEST(StorageAccessAccumulator, TargetIsTheQueueThatHidesRampAndDrain) {
  StorageAccessAccumulator acc(256, 0.9);
  EXPECT_EQ(acc.target(), 256u);
  uint64_t now = 0, reads = 0, latency = 0;
  acc.Observe(now, reads, latency);
  // 100 K reads/s at 1 ms: 0.9 / 0.1 * 2 * 100 = 1800 reads.
  Feed(acc, now, reads, latency, 4, 100, 100000, 1000);
  EXPECT_NEAR(acc.peak_iops(), 100000, 100);
  EXPECT_NEAR(acc.latency_us(), 1000, 1);
  EXPECT_NEAR(static_cast<double>(acc.target()), 1800, 5);
  // A slower window (compute-bound) keeps the peak; a shorter latency lowers the target.
  Feed(acc, now, reads, latency, 4, 100, 50000, 500);
  EXPECT_NEAR(acc.peak_iops(), 100000, 100);
  EXPECT_NEAR(static_cast<double>(acc.target()), 900, 5);
  // Never below the engine's depth; a window without reads changes nothing.
  Feed(acc, now, reads, latency, 4, 100, 1000, 10);
  EXPECT_EQ(acc.target(), 256u);
  const uint64_t before = acc.target();
  Feed(acc, now, reads, latency, 4, 100, 0, 0);
  EXPECT_EQ(acc.target(), before);
}

}  // namespace
}  // namespace strata
