// `strata`: one binary, one subcommand per file in this folder.
#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "cli/command.h"
#include "cli/failure.h"
#include "common/interrupt.h"
#include "strata/error.h"
#include "strata/memory_budget.h"

int main(int argc, char** argv) {
  CLI::App app("Strata: graph neural network training on graphs larger than memory", "strata");
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1");
  std::map<const CLI::App*, strata::cli::Runner> runners;
  auto add = [&](strata::cli::Runner (*adder)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    strata::cli::Runner runner = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(runner);
  };
  add(strata::cli::AddGenerateCommand);
  add(strata::cli::AddImportCommand);
  add(strata::cli::AddInfoCommand);
  add(strata::cli::AddExportCommand);
  add(strata::cli::AddPartitionCommand);
  add(strata::cli::AddTrainCommand);
  add(strata::cli::AddEvalCommand);
  auto* bench = app.add_subcommand("bench", "Measure the machine and Strata's stages");
  bench->require_subcommand(1);
  runners[bench] = [] {};
  for (auto adder : {strata::cli::AddBenchDiskCommand, strata::cli::AddBenchGatherCommand,
                     strata::cli::AddBenchSampleCommand, strata::cli::AddBenchStepCommand,
                     strata::cli::AddBenchSpGemmCommand}) {
    size_t before = bench->get_subcommands({}).size();
    strata::cli::Runner runner = adder(*bench);
    runners[bench->get_subcommands({})[before]] = std::move(runner);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.empty()) what = "bad command line";
    std::fprintf(stderr, "strata: error: %s (see strata --help)\n", what.c_str());
    return 2;
  }

  try {
    strata::InterruptScope interrupts;
    for (const CLI::App* sub = app.get_subcommands().front(); sub != nullptr;) {
      runners.at(sub)();
      auto nested = sub->get_subcommands();
      sub = nested.empty() ? nullptr : nested.front();
    }
  } catch (const std::exception&) {
    const strata::cli::Failure failure = strata::cli::DescribeFailure(std::current_exception());
    std::fprintf(stderr, "strata: error: %s\n", failure.message.c_str());
    return failure.status;
  }
  return 0;
}
