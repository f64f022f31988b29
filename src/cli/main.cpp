// bosch: command-line entry point. Subcommands live in cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cli/command.h"
#include "util/error.h"

namespace bosch::cli {

std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> r;
  return r;
}

std::string default_model_path() {
  if (const char* e = std::getenv("BOSCH_DEFAULT_MODEL")) return e;
  return std::string(BOSCH_SOURCE_DIR) + "/models/default";
}

std::string resolve_model(const std::string& arg) { return arg.empty() ? default_model_path() : arg; }

}  // namespace bosch::cli

int main(int argc, char** argv) {
  CLI::App app{"bosch: turn most attention heads of an LLM into sliding-window attention, "
               "chosen by black-box search, and measure what it costs"};
  app.require_subcommand(1);
  auto& reg = bosch::cli::command_registry();
  std::sort(reg.begin(), reg.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& c : reg) c.setup(*app.add_subcommand(c.name, c.help));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const bosch::Error& e) {
    std::fprintf(stderr, "bosch: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bosch: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
