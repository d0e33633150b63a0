// The subcommands of `strata`. Each Add*Command registers its options on a CLI11 subcommand
// and returns the function that runs it once the command line is parsed. Runners throw
// strata::Error; main() prints it and picks the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace strata::cli {

using Runner = std::function<void()>;

Runner AddGenerateCommand(CLI::App& app);
Runner AddImportCommand(CLI::App& app);
Runner AddInfoCommand(CLI::App& app);
Runner AddExportCommand(CLI::App& app);
Runner AddPartitionCommand(CLI::App& app);
Runner AddTrainCommand(CLI::App& app);
Runner AddEvalCommand(CLI::App& app);
// `strata bench disk|gather|...`: each adds itself under the `bench` subcommand.
Runner AddBenchDiskCommand(CLI::App& bench);
Runner AddBenchGatherCommand(CLI::App& bench);
Runner AddBenchSampleCommand(CLI::App& bench);
Runner AddBenchStepCommand(CLI::App& bench);
Runner AddBenchSpGemmCommand(CLI::App& bench);

}  // namespace strata::cli
