#include "minibatch/storage_access_accumulator.h"

#include <algorithm>
#include <cmath>

namespace strata {

StorageAccessAccumulator::StorageAccessAccumulator(uint64_t min_target, double eta)
    : min_target_(min_target), factor_(eta / (1 - eta) * 2), target_(min_target) {}

void StorageAccessAccumulator::Observe(uint64_t now_ns, uint64_t reads_completed,
                                       uint64_t latency_ns) {
  if (!started_) {
    started_ = true;
    start_ns_ = now_ns;
    start_reads_ = reads_completed;
    start_latency_ns_ = latency_ns;
    return;
  }
  if (++batches_ < kWindowBatches) return;
  const uint64_t reads = reads_completed - start_reads_;
  if (reads > 0 && now_ns > start_ns_) {
    peak_iops_ = std::max(peak_iops_, reads / ((now_ns - start_ns_) * 1e-9));
    latency_ns_ = static_cast<double>(latency_ns - start_latency_ns_) / reads;
    const double wanted = factor_ * peak_iops_ * latency_ns_ * 1e-9;
    target_ = std::max(min_target_, static_cast<uint64_t>(std::ceil(wanted)));
  }
  batches_ = 0;
  start_ns_ = now_ns;
  start_reads_ = reads_completed;
  start_latency_ns_ = latency_ns;
}

}  // namespace strata
