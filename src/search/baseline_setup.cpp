#include "search/baseline_setup.h"

#include <cstdio>

#include "search/bosch_search.h"
#include "tasks/niah.h"
#include "tasks/prompt_fit.h"
#include "util/error.h"

namespace bosch::search {

bool needs_calibration(const std::string& method) {
  const std::string m = is_search_method(method) ? "bosch" : canonical_baseline(method);
  return m == "bosch" || m == "locality" || m == "retrieval" || m == "gate" || m == "ablation" || m == "apl" ||
         m == "qada" || m == "proxy";
}

BaselineInputs Experiment::baseline_inputs() const {
  BaselineInputs in;
  const auto& c = model->config();
  in.n_layers = c.n_layers;
  in.n_heads = c.n_kv_heads;
  in.window = objective_options.window;
  in.sinks = objective_options.sinks;
  in.model = model.get();
  in.objective = objective.get();
  in.calib = calibration.samples.empty() ? nullptr : &calibration.samples;
  if (tokenizer && tokenizer->bos_id() >= 0) in.razor_prefix = {tokenizer->bos_id()};
  return in;
}

Experiment make_experiment(const ExperimentOptions& o, bool need_calibration) {
  Experiment e;
  e.model = Model::load(o.model);
  e.tokenizer = load_tokenizer(o.model);
  e.info = mask_model_info(*e.model);
  auto& mo = e.objective_options;
  mo.window = o.window;
  mo.sinks = o.sinks;
  mo.cache_bytes = static_cast<int64_t>(o.cache_gb * (1 << 30));
  if (!need_calibration) return e;
  CalibrationOptions co = o.calib;
  co.window = o.window, co.sinks = o.sinks, co.chat = o.chat, co.seed = o.seed;
  if (e.model->config().max_context > 0) co.max_length = e.model->config().max_context;
  e.calibration = make_calibration(*e.tokenizer, co, e.model.get());
  mo.exact_weight = e.calibration.exact_weight;
  mo.logprob_weight = o.logprob_weight >= 0 ? o.logprob_weight : e.calibration.logprob_weight;
  mo.description = e.calibration.description;
  std::fprintf(stderr, "calibration: %zu samples (%s)\n", e.calibration.samples.size(),
               e.calibration.description.c_str());
  e.objective = std::make_unique<ModelObjective>(*e.model, e.calibration.samples, mo);
  return e;
}

void check_has_test_split(const std::string& obj) {
  check(obj == "niah" || obj.rfind("niah:", 0) == 0,
        "--objective {}: compare scores masks on the held-out NIAH test split, so the objective "
        "must be niah or niah:FAMILIES", obj);
  parse_niah_suite(obj);  // unknown families fail here, before anything is loaded
}

std::vector<TaskSample> niah_test_samples(const Tokenizer& tok, const ExperimentOptions& o,
                                          const std::vector<int>& lengths, int depths, int samples,
                                          uint64_t seed) {
  const std::string& obj = o.calib.objective;
  check_has_test_split(obj);
  NiahOptions no;
  no.families = parse_niah_suite(obj);
  no.lengths = lengths;
  no.depths = depth_grid(depths);
  no.samples = samples;
  no.seed = seed;
  no.split = Split::test;
  no.text_haystack = Haystack::from_arg(o.calib.haystack);
  no.chat = chat_wrap_for(tok, o.chat);
  return generate_niah(tok, no);
}

}  // namespace bosch::search
