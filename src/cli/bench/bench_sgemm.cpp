// `bosch bench sgemm`: the machine's measured float32 GEMM throughput (OpenBLAS), the ceiling
// for the model's achieved GFLOP/s.
#include <fmt/format.h>

#include <memory>

#include "cli/command.h"
#include "kernels/sgemm_peak.h"
#include "util/parallel.h"

namespace bosch::cli {
namespace {

struct SgemmOptions {
  int max_size = 2048;
  int repeats = 3;
};

BenchRegistrar reg("sgemm", "measured sgemm GFLOP/s (square 1024..2048, best of a few runs)",
                   [](CLI::App& app) {
  auto o = std::make_shared<SgemmOptions>();
  add_opt(app, "--max-size", o->max_size, "largest square size (from 1024, step 512)")
      ->check(CLI::Range(1, 8192));
  add_opt(app, "--repeats", o->repeats, "timed runs per size; the best counts")->check(CLI::Range(1, 100));
  app.callback([o] {
    const double g = measure_sgemm_gflops(o->max_size, o->repeats);
    fmt::print("sgemm: {:.1f} GFLOP/s (float32, square up to {}, best of {}, {} threads)\n", g,
               o->max_size, o->repeats, num_threads());
  });
});

}  // namespace
}  // namespace bosch::cli
