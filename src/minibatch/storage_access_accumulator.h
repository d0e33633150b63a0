// StorageAccessAccumulator is GIDS's dynamic storage access accumulator (§3.2): it decides
// how many storage reads the fetch stage keeps queued, merging the gathers of consecutive
// batches until there are enough. A gather of N reads runs at the device's rate only between
// its ramp-up and its drain, each about one read latency L long, so it achieves
// N / (N / IOPS + 2 L); reaching a share eta of the peak needs
//
//   N >= eta / (1 - eta) * IOPS * 2 L
//
// queued reads. IOPS (the best rate seen) and L (the mean latency of the last window) are
// measured on the fly from the reads the store completes, so reads served by the caches
// (which never reach the device) lower the rate only while they are too few to keep it busy,
// and the target follows. The target never falls below the engine's queue depth.
//
// Invariant: target() >= min_target.
#pragma once

#include <cstdint>

namespace strata {

class StorageAccessAccumulator {
 public:
  // eta: the share of the peak rate the queued reads should sustain.
  explicit StorageAccessAccumulator(uint64_t min_target, double eta = 0.9);

  // Feeds the store's cumulative counters after a batch; every few batches the window closes
  // and the target is recomputed.
  void Observe(uint64_t now_ns, uint64_t reads_completed, uint64_t latency_ns);

  uint64_t target() const { return target_; }
  double peak_iops() const { return peak_iops_; }
  double latency_us() const { return latency_ns_ * 1e-3; }

 private:
  static constexpr uint64_t kWindowBatches = 4;

  uint64_t min_target_;
  double factor_;  // eta / (1 - eta) * 2
  uint64_t target_;
  double peak_iops_ = 0;
  double latency_ns_ = 0;
  uint64_t batches_ = 0;
  bool started_ = false;
  uint64_t start_ns_ = 0, start_reads_ = 0, start_latency_ns_ = 0;
};

}  // namespace strata
