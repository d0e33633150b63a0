// strata info DATASET [--verify] [--json]
#include <cstdio>

#include "cli/command.h"
#include "cli/dataset_summary.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddInfoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Describe a dataset directory; --verify checks it");
  struct Args {
    std::string dataset;
    bool verify = false;
    bool json = false;
    std::string budget;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("DATASET", args->dataset, "dataset directory")->required();
  cmd->add_flag("--verify", args->verify,
                "recompute every file's size and xxh64, and check the offsets, ids, labels and "
                "splits they hold");
  cmd->add_option("--memory-budget", args->budget, "memory budget for --verify (default: RAM/4)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  return [args] {
    const Dataset dataset = Dataset::Open(args->dataset);
    if (args->verify) {
      MemoryBudget budget(MemoryBudgetFromOption(args->budget));
      dataset.Verify(budget);
    }
    if (args->json) {
      auto j = DatasetInfoJson(dataset);
      if (args->verify) j["verified"] = true;
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::fputs(DatasetInfoText(dataset).c_str(), stdout);
      if (args->verify) {
        std::printf(
            "verified     every size and xxh64 matches meta.json; offsets, ids, labels "
            "and splits are consistent\n");
      }
    }
  };
}

}  // namespace strata::cli
