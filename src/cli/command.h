// Subcommand registry: each cli/cmd_*.cpp registers itself with a static CommandRegistrar, so
// adding a command touches only its own file.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/options.h"
#include <functional>
#include <string>
#include <vector>

namespace bosch::cli {

struct CommandSpec {
  std::string name, help;
  std::function<void(CLI::App&)> setup;  // adds options and sets the callback
};

std::vector<CommandSpec>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string help, std::function<void(CLI::App&)> setup) {
    command_registry().push_back({std::move(name), std::move(help), std::move(setup)});
  }
};

// The embedded default model (models/default in the source tree, or $BOSCH_DEFAULT_MODEL),
// used when MODEL is omitted; resolve_model also takes an embedded model's name (`deep`).
std::string default_model_path();
std::string resolve_model(const std::string& arg);

}  // namespace bosch::cli

namespace bosch::cli {
// `bosch bench NAME`: benchmarks register the same way, under the bench command.
std::vector<CommandSpec>& bench_registry();
struct BenchRegistrar {
  BenchRegistrar(std::string name, std::string help, std::function<void(CLI::App&)> setup) {
    bench_registry().push_back({std::move(name), std::move(help), std::move(setup)});
  }
};
}  // namespace bosch::cli
