// The records a training run appends to its metrics log (--metrics-out, train/metrics_log.h):
// one "epoch" object per epoch and one "final" object at the end. Field names and order are
// what docs/training.md lists and what scripts read; change them only with the docs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "strata/train.h"

namespace strata {

// {"event": "epoch"} and then every field of EpochFields() that `report` has, in the table's
// order ("a.b" as member b of object a); in a data-parallel run then "rank_times", one object
// per rank: time_s, stall_s, train_s, sample_s, fetch_s, allreduce_s.
nlohmann::ordered_json EpochRecord(const EpochReport& report);

// {"event": "final", "test_acc", "val_acc" (at eval_point), "eval_point", "final_test_acc",
//  "final_val_acc", "best_epoch", "best_val_acc", "best_test_acc", "total_time_s", "blas_core",
//  "peak_rss_bytes", "memory_budget_bytes", "budget_peak_bytes" (the most charged at once)}
nlohmann::ordered_json FinalRecord(const TrainResult& result, EvalPoint eval_point,
                                   uint64_t peak_rss_bytes, uint64_t memory_budget_bytes,
                                   uint64_t budget_peak_bytes);

}  // namespace strata
