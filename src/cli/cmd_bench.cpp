// `bosch bench <what>`: gathers the benchmarks registered with BenchRegistrar.
#include <algorithm>

#include "cli/command.h"

namespace bosch::cli {

std::vector<CommandSpec>& bench_registry() {
  static std::vector<CommandSpec> r;
  return r;
}

namespace {
CommandRegistrar reg("bench", "benchmarks that print measured ratios (not tests)", [](CLI::App& app) {
  app.require_subcommand(1);
  auto& r = bench_registry();
  std::sort(r.begin(), r.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& c : r) c.setup(*app.add_subcommand(c.name, c.help));
});
}  // namespace

}  // namespace bosch::cli
