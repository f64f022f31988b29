// `bosch export-mask MASK.json --format duo|razor|layer-windows|gguf --out PATH` and
// `bosch import-mask --duo DIR --ratio R --model MODEL --out MASK.json`: masks to and from
// other tools, each in that tool's window convention (docs/mask-formats.md).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.h"
#include "masks/gguf_mask.h"
#include "masks/mask_export.h"
#include "masks/mask_file.h"
#include "model/model.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch::cli {
namespace {

struct ExportOptions {
  std::string mask, format, model, out;
  int64_t max_context = 0;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void run_export(const ExportOptions& o) {
  MaskFile mf = MaskFile::load(o.mask);
  AttentionPlan plan = mf.to_plan();
  std::unique_ptr<Model> model;
  if (!o.model.empty()) {
    model = Model::load(o.model, FileHold::Map);  // only its shape and identity are read
    mf.check_fits(mask_model_info(*model), o.mask);
  }
  if (o.format == "duo") {
    export_duo(plan, o.out, mf.window, mf.sinks);
    fmt::print("wrote DuoAttention pattern {}/ (full_attention_heads.tsv, config.json: sink_size {}, "
               "recent_size {}) — {}\n",
               o.out, mf.sinks, mf.window, plan.summary());
  } else if (o.format == "razor") {
    write_file_atomic(o.out, razor_json(plan, mf.window, mf.sinks).dump(2) + "\n");
    fmt::print("wrote per-layer SWA head lists {} — {}\n", o.out, plan.summary());
  } else if (o.format == "layer-windows") {
    int64_t ctx = o.max_context > 0 ? o.max_context : (model ? model->config().max_context : 0);
    auto j = layer_windows_json(plan, ctx);
    write_file_atomic(o.out, j.dump(2) + "\n");
    for (auto& w : j["warnings"]) std::fprintf(stderr, "bosch: warning: %s\n", w.get<std::string>().c_str());
    fmt::print("wrote per-layer windows {} — {}\n", o.out, plan.summary());
  } else if (o.format == "gguf") {
    check(!o.model.empty() && ends_with(o.model, ".gguf"),
          "--format gguf copies a GGUF model with the mask in its metadata: give --model MODEL.gguf");
    write_gguf_with_plan(o.model, plan, o.out);
    fmt::print("wrote {} (copy of {} with bosch.swa.* metadata) — {}\n", o.out, o.model, plan.summary());
  } else {
    fail("--format '{}' is not known (expected duo, razor, layer-windows or gguf)", o.format);
  }
}

struct ImportOptions {
  std::string duo, model, out;
  double ratio = -1;
  int window = 0, sinks = -1;
};

void run_import(const ImportOptions& o) {
  auto m = Model::load(resolve_model(o.model), FileHold::Map);  // only its shape and identity are read
  const auto& c = m->config();
  DuoPattern p = read_duo(o.duo);
  AttentionPlan plan = plan_from_duo(p, o.ratio, c.n_layers, c.n_kv_heads, o.window, o.sinks);
  const int W = o.window > 0 ? o.window : p.recent_size, S = o.sinks >= 0 ? o.sinks : p.sink_size;
  nlohmann::json prov = {{"imported_from", "duoattention"},
                         {"pattern_dir", std::filesystem::absolute(o.duo).string()},
                         {"ratio", o.ratio},
                         {"sink_size", p.sink_size},
                         {"recent_size", p.recent_size},
                         {"conversion", "window = recent_size, sinks = sink_size (same visibility rule)"}};
  MaskFile mf = MaskFile::from_plan(plan, mask_model_info(*m), o.ratio, prov, W, S);
  mf.save(o.out);
  fmt::print("wrote {} — {} from the {} lowest DuoAttention values\n", o.out, plan.summary(), plan.count_swa());
}

CommandRegistrar reg_export(
    "export-mask", "write a mask for another tool (DuoAttention, Razor lists, per-layer windows, GGUF copy)",
    [](CLI::App& app) {
      auto o = std::make_shared<ExportOptions>();
      add_opt(app, "mask", o->mask, "mask file (bosch-mask JSON)")->required();
      add_opt(app, "--format", o->format, "duo | razor | layer-windows | gguf")->required();
      add_opt(app, "--model", o->model, "model to check the mask against (required for gguf: the file to copy)");
      add_opt(app, "--max-context", o->max_context, "window written for full layers (layer-windows)");
      add_opt(app, "--out", o->out, "output directory (duo) or file")->required();
      app.callback([o] { run_export(*o); });
    });

CommandRegistrar reg_import("import-mask", "make a mask from a DuoAttention pattern, thresholded to a ratio",
                            [](CLI::App& app) {
                              auto o = std::make_shared<ImportOptions>();
                              add_opt(app, "--duo", o->duo, "DuoAttention pattern directory")->required();
                              add_opt(app, "--ratio", o->ratio, "fraction of KV heads made SWA")
                                  ->required()
                                  ->check(CLI::Range(0.0, 1.0));
                              add_opt(app, "--model", o->model, "the model the mask is for (default: embedded)");
                              add_opt(app, "--window", o->window, "override W (default: recent_size)");
                              add_opt(app, "--sinks", o->sinks, "override S (default: sink_size)");
                              add_opt(app, "--out", o->out, "mask file to write")->required();
                              app.callback([o] { run_import(*o); });
                            });

}  // namespace
}  // namespace bosch::cli
