#include "train/epoch_record.h"

#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace strata {

nlohmann::ordered_json EpochRecord(const EpochReport& report) {
  nlohmann::ordered_json record = {{"event", "epoch"}};
  for (const EpochField& field : EpochFields()) {
    if (!HasField(report, field)) continue;
    const size_t dot = field.key.find('.');
    nlohmann::ordered_json& slot =
        dot == std::string_view::npos
            ? record[std::string(field.key)]
            : record[std::string(field.key.substr(0, dot))][std::string(field.key.substr(dot + 1))];
    std::visit(
        [&slot](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string_view>) {
            slot = std::string(value);
          } else {
            slot = value;
          }
        },
        field.value(report));
  }
  // A data-parallel run's ranks, each with its stage times: the one member that is a list.
  if (report.data_parallel) {
    nlohmann::ordered_json& ranks = record["rank_times"] = nlohmann::ordered_json::array();
    for (const RankTimes& t : report.data_parallel->rank_times) {
      ranks.push_back({{"time_s", t.time_s},
                       {"stall_s", t.stall_s},
                       {"train_s", t.train_busy_s},
                       {"sample_s", t.sample_s},
                       {"fetch_s", t.fetch_s},
                       {"allreduce_s", t.allreduce_s}});
    }
  }
  return record;
}

nlohmann::ordered_json FinalRecord(const TrainResult& result, EvalPoint eval_point,
                                   uint64_t peak_rss_bytes, uint64_t memory_budget_bytes,
                                   uint64_t budget_peak_bytes) {
  return {{"event", "final"},
          {"test_acc", result.test_acc},
          {"val_acc", result.val_acc},
          {"eval_point", std::string(EvalPointName(eval_point))},
          {"final_test_acc", result.final_test_acc},
          {"final_val_acc", result.final_val_acc},
          {"best_epoch", result.best_epoch},
          {"best_val_acc", result.best_val_acc},
          {"best_test_acc", result.best_test_acc},
          {"total_time_s", result.total_time_s},
          {"stopped_by", std::string(StopReasonName(result.stopped_by))},
          {"blas_core", result.blas_core},
          {"peak_rss_bytes", peak_rss_bytes},
          {"memory_budget_bytes", memory_budget_bytes},
          {"budget_peak_bytes", budget_peak_bytes}};
}

}  // namespace strata
