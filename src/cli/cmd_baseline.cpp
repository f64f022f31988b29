// `bosch baseline [MODEL] --method NAME --ratio R --out MASK.json`: one baseline mask
// (search/baselines/baseline.h), exactly K = round(R * layers * KV heads) SWA heads, in the mask format
// of `bosch search`. Methods that need calibration data use the same calibration samples and
// objective as the search (--objective, --lengths, --depths, --samples, --seed).
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "masks/mask_file.h"
#include "search/baselines/baseline.h"
#include "cli/experiment_options.h"
#include "search/experiments/experiment.h"
#include "util/error.h"
#include "util/mpi_comm.h"

namespace bosch::cli {
namespace {

struct BaselineCliOptions {
  search::ExperimentOptions exp;
  std::string method, out;
  double ratio = 0.5;
  bool no_chat = false;
};

void run_baseline(BaselineCliOptions o) {
  const std::string method = search::canonical_baseline(o.method);  // fails before loading
  o.exp.model = resolve_model(o.exp.model);
  o.exp.chat = !o.no_chat;
  search::Experiment e = search::make_experiment(o.exp, search::needs_calibration(method));
  search::BaselineInputs in = e.baseline_inputs();
  in.seed = o.exp.seed;
  in.duo_dir = o.exp.duo_dir;
  in.razor_period = o.exp.razor_period;
  search::BaselineRunner runner(in);
  search::BaselineMask b = runner.run(method, o.ratio);

  nlohmann::json prov = b.provenance;
  prov["model_path"] = o.exp.model;
  prov["evaluations"] = b.evaluations;
  prov["seconds"] = b.seconds;
  if (e.objective) prov["objective"] = e.objective->describe();
  if (mpi::rank() != 0) return;  // the other ranks hold the same mask; rank 0 alone writes
  MaskFile::from_bits(b.bits, e.info, o.exp.swa, o.ratio, prov).save(o.out);
  std::fprintf(stderr, "baseline %s: %d/%zu heads SWA (W=%d, S=%d), %lld evaluations, %.2f s\n", method.c_str(),
               b.k, b.bits.size(), o.exp.swa.window, o.exp.swa.sinks, static_cast<long long>(b.evaluations), b.seconds);
  for (int l = 0; l < e.info.n_layers; ++l) {
    std::string row;
    for (int h = 0; h < e.info.n_kv_heads; ++h) row += b.bits[static_cast<size_t>(l) * e.info.n_kv_heads + h] ? 'S' : '.';
    std::fprintf(stderr, "  layer %2d  %s\n", l, row.c_str());
  }
  fmt::print("{}\n", o.out);
}

CommandRegistrar reg("baseline", "a baseline mask (layer-level RAND/INTR/BME or a static head ranking) at a ratio", [](CLI::App& app) {
  auto o = std::make_shared<BaselineCliOptions>();
  std::string methods;
  for (const auto& m : search::baseline_methods()) methods += fmt::format("\n  {:<11} {}", m, search::baseline_description(m));
  add_opt(app, "model", o->exp.model, "a .gguf file or Hugging Face directory (default: the embedded model)");
  add_opt(app, "--method", o->method, "baseline:" + methods)->required();
  add_opt(app, "--ratio", o->ratio, "target fraction of SWA heads (K = round(ratio * layers * KV heads))")
      ->required()->check(CLI::Range(0.0, 1.0));
  add_opt(app, "--out", o->out, "mask file to write (JSON)")->required();
  add_experiment_options(app, o->exp, o->no_chat);
  app.callback([o] { run_baseline(*o); });
});

}  // namespace
}  // namespace bosch::cli
