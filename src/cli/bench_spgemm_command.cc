// strata bench spgemm DATASET [--threads T] [--repeats R] [--memory-budget B] [--json]
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "fullgraph/spgemm_bench.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddBenchSpGemmCommand(CLI::App& bench) {
  auto* cmd = bench.add_subcommand(
      "spgemm", "Time the SpGEMM Â · X on a dataset's GCN adjacency and sparse features");
  struct Args {
    SpGemmBenchOptions options;
    std::string budget;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  SpGemmBenchOptions& o = args->options;
  cmd->add_option("DATASET", o.dataset, "dataset directory (sparse features)")->required();
  cmd->add_option("--threads", o.threads, "threads")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--repeats", o.repeats, "products to time")->capture_default_str();
  cmd->add_option("--memory-budget", args->budget, "memory budget (default: RAM/4)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  return [args] {
    SpGemmBenchOptions o = args->options;
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    const SpGemmBenchResult r = RunSpGemmBench(o);
    if (args->json) {
      const nlohmann::ordered_json j = {{"rows", r.rows},
                                        {"cols", r.cols},
                                        {"a_nnz", r.a_nnz},
                                        {"x_nnz", r.x_nnz},
                                        {"product_nnz", r.product_nnz},
                                        {"multiply_adds", r.multiply_adds},
                                        {"threads", o.threads},
                                        {"repeats", o.repeats},
                                        {"min_s", r.min_s},
                                        {"median_s", r.median_s},
                                        {"gflops", r.gflops},
                                        {"budget_peak_bytes", r.budget_peak_bytes},
                                        {"peak_rss_bytes", r.peak_rss_bytes}};
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    std::printf(
        "Â (%llu rows, %llu stored) · X (%llu columns, %llu stored) = %llu stored, %u threads: "
        "%.3f s min, %.3f s median of %u (%.2f GFLOP/s useful), budget peak %s, peak RSS %s\n",
        static_cast<unsigned long long>(r.rows), static_cast<unsigned long long>(r.a_nnz),
        static_cast<unsigned long long>(r.cols), static_cast<unsigned long long>(r.x_nnz),
        static_cast<unsigned long long>(r.product_nnz), o.threads, r.min_s, r.median_s, o.repeats,
        r.gflops, FormatBytes(r.budget_peak_bytes).c_str(), FormatBytes(r.peak_rss_bytes).c_str());
  };
}

}  // namespace strata::cli
