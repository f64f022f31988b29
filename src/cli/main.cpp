// bosch: command-line entry point. Subcommands live in cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/command.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch::cli {

std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> r;
  return r;
}

std::string default_model_path() {
  if (const char* e = std::getenv("BOSCH_DEFAULT_MODEL")) return e;
  return std::string(BOSCH_SOURCE_DIR) + "/models/default";
}

// A bare name of an embedded model (`default`, `deep`) that is not a path here means the
// source tree's models/<name>; anything else is a path.
std::string resolve_model(const std::string& arg) {
  if (arg.empty()) return default_model_path();
  if (arg.find('/') == std::string::npos && !std::filesystem::exists(arg)) {
    if (arg == "default") return default_model_path();
    const std::string embedded = std::string(BOSCH_SOURCE_DIR) + "/models/" + arg;
    if (std::filesystem::exists(embedded + "/config.json")) return embedded;
  }
  return arg;
}

}  // namespace bosch::cli

namespace {

// Under MPI (several ranks) an error on any rank ends the whole job: the other ranks may be
// waiting for this one. Rank 0 prints as before; other ranks name themselves.
int fail_run(int code, const std::string& kind, const char* what) {
  const int r = bosch::mpi::rank();
  const bool named = r == 0 || std::string_view(what).starts_with("MPI rank");
  const std::string msg = named ? fmt::format("bosch: {}: {}\n", kind, what)
                                : fmt::format("bosch: MPI rank {}: {}: {}\n", r, kind, what);
  [[maybe_unused]] const ssize_t w = ::write(bosch::mpi::error_fd(), msg.data(), msg.size());
  if (bosch::mpi::distributed()) bosch::mpi::abort(code);
  bosch::mpi::finalize();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  bosch::mpi::init(&argc, &argv);
  bosch::guard_inputs(true);  // no output of this run may replace a file it read
  CLI::App app{"bosch: turn most attention heads of an LLM into sliding-window attention, "
               "chosen by black-box search, and measure what it costs"};
  app.require_subcommand(1);
  auto& reg = bosch::cli::command_registry();
  std::sort(reg.begin(), reg.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& c : reg) c.setup(*app.add_subcommand(c.name, c.help));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // every rank parses the same flags: all end here together
    bosch::mpi::finalize();
    return code;
  } catch (const bosch::Error& e) {
    return fail_run(1, "error", e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the file system refused (permission, a file where a folder
    // should be): the user's error, said in our words, not the library's.
    const std::string p1 = e.path1().string(), p2 = e.path2().string();
    const std::string msg = fmt::format("'{}'{}: {}", p1, p2.empty() ? "" : fmt::format(" -> '{}'", p2),
                                        e.code().message());
    return fail_run(1, "error", msg.c_str());
  } catch (const std::bad_alloc&) {
    return fail_run(1, "error", "out of memory (an input or option asks for more than this machine has)");
  } catch (const std::exception& e) {
    return fail_run(2, "internal error", e.what());
  }
  bosch::mpi::finalize();
  return 0;
}
