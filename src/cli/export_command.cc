// strata export DATASET --edge-list FILE
#include <cstdio>

#include "cli/command.h"
#include "dataset/edge_list_export.h"

namespace strata::cli {

Runner AddExportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Write a dataset's graph as a text edge list");
  struct Args {
    std::string dataset;
    std::string edge_list;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("DATASET", args->dataset, "dataset directory")->required();
  cmd->add_option("--edge-list", args->edge_list, "output file, 'src dst' per line")->required();
  return [args] {
    uint64_t edges = ExportEdgeList(args->dataset, args->edge_list);
    std::printf("wrote %s: %llu edges\n", args->edge_list.c_str(),
                static_cast<unsigned long long>(edges));
  };
}

}  // namespace strata::cli
