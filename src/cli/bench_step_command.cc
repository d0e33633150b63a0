// strata bench step DATASET --model M --layers L --hidden H --fanouts ... --batch-size B
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/option_parsers.h"
#include "minibatch/step_bench.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddBenchStepCommand(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("step", "Time sampling, gathering and one training step");
  struct Args {
    TrainOptions options;
    std::string model = "sage";
    std::string fanouts = "15,10,5";
    std::string store = "memory";
    std::string budget;
    uint64_t batches = 20;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  TrainOptions& o = args->options;
  o.model.layers = 3;
  o.model.hidden = 256;
  o.model.dropout = 0.5;
  o.sampling.batch_size = 1000;
  o.eval_every = 0;
  cmd->add_option("DATASET", o.dataset, "dataset directory")->required();
  cmd->add_option("--model", args->model, "sage, gcn or gat")
      ->check(CLI::IsMember({"sage", "gcn", "gat"}));
  cmd->add_option("--layers", o.model.layers, "layers")->capture_default_str();
  cmd->add_option("--hidden", o.model.hidden, "hidden size")->capture_default_str();
  cmd->add_option("--heads", o.model.heads, "GAT heads")->capture_default_str();
  cmd->add_option("--fanouts", args->fanouts, "fanouts, input layer first")->capture_default_str();
  cmd->add_option("--batch-size", o.sampling.batch_size, "seeds per batch")->capture_default_str();
  cmd->add_option("--batches", args->batches, "batches to time")->capture_default_str();
  cmd->add_option("--threads", o.threads, "threads")->capture_default_str();
  cmd->add_option("--feature-store", args->store, "where gathers read: memory, mmap, direct")
      ->check(CLI::IsMember({"memory", "mmap", "direct"}));
  cmd->add_option("--memory-budget", args->budget, "memory budget (default: RAM/4)");
  cmd->add_option("--seed", o.seed, "random seed");
  cmd->add_flag("--json", args->json, "print one JSON object");
  return [args] {
    TrainOptions o = args->options;
    o.model.kind = ParseModelKind(args->model);
    o.sampling.fanouts = ParseFanouts(args->fanouts, "--fanouts");
    o.features.store = ParseFeatureStoreKind(args->store);
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    o.features.cache_fraction = 0;
    StepBenchResult r = RunStepBench(o, args->batches);
    nlohmann::ordered_json j = {{"model", args->model},
                                {"layers", o.model.layers},
                                {"hidden", o.model.hidden},
                                {"fanouts", args->fanouts},
                                {"batch_size", o.sampling.batch_size},
                                {"threads", o.threads},
                                {"batches", r.batches},
                                {"step_ms_median", r.step_ms_median},
                                {"sample_ms_mean", r.sample_ms_mean},
                                {"gather_ms_mean", r.gather_ms_mean},
                                {"gemm_share", r.gemm_share},
                                {"gemm_gflops", r.gemm_gflops},
                                {"blas_core", r.blas_core},
                                {"input_rows_mean", r.input_rows_mean}};
    if (args->json) {
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf(
          "%s, %zu layers, hidden %zu, fanouts %s, batch %llu, %u threads: step %.1f ms "
          "(median; GEMM %.0f%% at %.0f GFLOP/s, OpenBLAS %s kernels), sample %.1f ms, gather "
          "%.1f ms, %.0f input rows per batch\n",
          args->model.c_str(), o.model.layers, o.model.hidden, args->fanouts.c_str(),
          static_cast<unsigned long long>(o.sampling.batch_size), o.threads, r.step_ms_median,
          r.gemm_share * 100, r.gemm_gflops, r.blas_core.c_str(), r.sample_ms_mean,
          r.gather_ms_mean, r.input_rows_mean);
    }
  };
}

}  // namespace strata::cli
