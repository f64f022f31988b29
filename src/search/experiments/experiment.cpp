#include "search/experiments/experiment.h"

#include "formats/model_source.h"
#include "model/forward_memory.h"

#include <algorithm>
#include <cstdio>

#include "search/objectives/distributed_objective.h"
#include "search/experiments/simulated_compare.h"
#include "search/objectives/simulator.h"
#include "search/objectives/synthetic_objective.h"
#include "tasks/niah.h"
#include "tasks/prompt_fit.h"
#include "util/error.h"

namespace bosch::search {

bool needs_calibration(const std::string& method) {
  const std::string m = is_search_method(method) ? "bosch" : canonical_baseline(method);
  return m == "bosch" || m == "locality" || m == "retrieval" || m == "gate" || m == "ablation" || m == "apl" ||
         m == "qada" || m == "proxy";
}

Objective& Experiment::search_objective() {
  if (synthetic) return *synthetic;
  check(objective != nullptr, "experiment: no calibration objective was built");
  return *objective;
}

BaselineInputs Experiment::baseline_inputs() const {
  BaselineInputs in;
  in.n_layers = info.n_layers;
  in.n_heads = info.n_kv_heads;
  in.swa = objective_options.swa;
  in.model = model.get();
  in.objective = synthetic ? synthetic.get() : objective.get();
  in.calib = calibration.samples.empty() ? nullptr : &calibration.samples;
  if (tokenizer && tokenizer->bos_id() >= 0) in.razor_prefix = {tokenizer->bos_id()};
  return in;
}

SearchOptions seeded_search(const ExperimentOptions& o, SearchOptions s) {
  s.seed = o.seed;
  return s;
}

Experiment make_experiment(const ExperimentOptions& o, bool need_calibration) {
  return make_experiment(o, parse_objective_spec(o.calib.objective), need_calibration);
}

Experiment make_experiment(const ExperimentOptions& o, const ObjectiveSpec& spec, bool need_calibration) {
  Experiment e;
  e.spec = spec;
  auto& mo = e.objective_options;
  mo.swa = o.swa;
  if (!e.spec.needs_model()) {  // no model: the objective is the whole experiment
    if (e.spec.kind == ObjectiveKind::simulator) {
      const SimulatorSpec s = parse_simulator_spec(e.spec.spec);
      e.synthetic = std::make_unique<SimulatedObjective>(
          std::make_shared<const SimulatedModel>(SimulatedModel::draw(s.params, s.seed)), SimulatedSplit::calibration);
    } else {
      e.synthetic = make_synthetic_objective(e.spec.spec);
    }
    e.info.arch = "synthetic";
    e.info.n_layers = e.synthetic->n_layers();
    e.info.n_kv_heads = e.info.n_heads = e.synthetic->n_heads();
    e.info.identity = e.synthetic->describe();
    return e;
  }
  // Without calibration nothing runs the model here: map it (no copy of the whole file).
  {  // opened once for both; dropped after (the model keeps only the mapped bytes)
    const ModelFile file = ModelFile::open(o.model, need_calibration ? weights_file_hold() : FileHold::Map);
    e.model = Model::load(file);
    e.tokenizer = load_tokenizer(file);
  }
  e.info = mask_model_info(*e.model);
  mo.cache_bytes = static_cast<int64_t>(o.cache_gb * (1 << 30));
  if (!need_calibration) return e;
  CalibrationOptions co = o.calib;
  co.swa = o.swa, co.chat = o.chat, co.seed = o.seed;
  if (e.model->config().max_context > 0) co.max_length = e.model->config().max_context;
  e.calibration = make_calibration(*e.tokenizer, e.spec, co, e.model.get());
  mo.exact_weight = e.calibration.exact_weight;
  mo.logprob_weight = o.logprob_weight >= 0 ? o.logprob_weight : e.calibration.logprob_weight;
  mo.kl_weight = o.kl_weight;
  mo.description = e.calibration.description;
  std::fprintf(stderr, "calibration: %zu samples (%s)\n", e.calibration.samples.size(),
               e.calibration.description.c_str());
  e.objective = make_model_objective(*e.model, e.calibration.samples, mo);
  if (const auto* d = dynamic_cast<const DistributedObjective*>(e.objective.get()))
    std::fprintf(stderr, "calibration: split over %s\n", d->summary().c_str());
  return e;
}

std::vector<NamedRanking> start_rankings(Experiment& e, const std::string& list, uint64_t seed) {
  std::vector<NamedRanking> out;
  if (list == "none" || list.empty()) return out;
  std::vector<std::string> names;
  for (size_t b = 0; b <= list.size();) {
    size_t end = list.find(',', b);
    if (end == std::string::npos) end = list.size();
    if (end > b) names.push_back(list.substr(b, end - b));
    b = end + 1;
  }
  for (const auto& name : names)
    check(is_static_start_ranking(name), "--starts {}: expected none or a list of locality, razor, retrieval, "
          "apl, qada, proxy", name);
  if (!e.model) {  // a synthetic objective has no attention to rank heads by
    std::fprintf(stderr, "search: --starts ignored: the %s objective has no model to rank heads on\n",
                 e.spec.spec.c_str());
    return out;
  }
  if (!e.spec.has_needles()) {
    const auto it = std::find(names.begin(), names.end(), "retrieval");
    if (it != names.end()) {
      check(list == kDefaultStarts, "--starts retrieval: the retrieval score needs needles (niah or longbench "
            "calibration), not --objective {}", e.spec.spec);
      names.erase(it);
      std::fprintf(stderr, "search: retrieval left out of the default starts (no needles in a %s calibration)\n",
                   e.spec.spec.c_str());
    }
  }
  BaselineInputs in = e.baseline_inputs();
  in.seed = seed;
  BaselineRunner runner(in);
  for (const auto& name : names) out.push_back({canonical_baseline(name), runner.importance(name)});
  return out;
}

std::vector<std::string> compare_methods(const ObjectiveSpec& spec, const std::string& methods, bool have_duo) {
  std::vector<std::string> out = parse_compare_methods(methods, have_duo);
  const bool all = methods == "all";
  if (spec.kind == ObjectiveKind::simulator) {
    if (all) {
      std::erase_if(out, [](const std::string& m) { return needs_model_weights(m); });
      // After the last search method of "all": a simulated evaluation costs microseconds.
      const auto last_search = std::find_if(out.rbegin(), out.rend(), is_search_method);
      out.insert(last_search.base(), "bosch-multi");
    }
    return out;  // run_simulated_compare refuses a named method that reads weights
  }
  if (!spec.has_needles()) {  // text has no needles to score retrieval on
    const auto it = std::find(out.begin(), out.end(), "retrieval");
    if (it != out.end()) {
      check(all, "--methods retrieval: the retrieval score needs needles (niah or longbench calibration), not "
            "--objective {}", spec.spec);
      out.erase(it);
      std::fprintf(stderr, "compare: retrieval left out of 'all' (no needles in a text calibration)\n");
    }
  }
  return out;
}

void check_test_objective(const ObjectiveSpec& calib, const std::string& test_objective) {
  if (test_objective.empty()) {
    check(calib.has_test_split(), "--objective {}: compare scores masks on the held-out NIAH test split, so the "
          "objective must be niah or niah:FAMILIES (or give --test-objective)", calib.spec);
    parse_niah_suite(calib.spec);  // unknown families fail here, before anything is loaded
    return;
  }
  const ObjectiveSpec t = parse_objective_spec(test_objective, "--test-objective");
  check(t.kind == ObjectiveKind::text || t.kind == ObjectiveKind::longbench,
        "--test-objective {}: expected text:FILE or longbench:DIR (NIAH objectives are scored on the NIAH test "
        "split without it)", test_objective);
  check(test_objective != calib.spec, "--test-objective {}: the same data as --objective; the masks must be "
        "scored on held-out data (a different file or directory)", test_objective);
}

TestSet make_test_set(const Experiment& e, const ExperimentOptions& o, const TestSetOptions& t) {
  check(e.model && e.tokenizer, "compare: the test set needs the model and its tokenizer");
  TestSet ts;
  ts.lengths = t.lengths.empty() ? e.calibration.lengths : t.lengths;
  ts.options = e.objective_options;
  ts.options.use_cache = false;  // each test mask is scored once
  ts.options.exact_weight = e.calibration.exact_weight;
  ts.options.logprob_weight = e.calibration.logprob_weight;
  ts.options.kl_weight = 0;
  if (t.objective.empty()) {
    check_forward_memory(e.model->config(), ts.lengths, "--test-lengths");
    ts.samples = niah_test_samples(*e.tokenizer, e.spec, o, ts.lengths, t.depths, t.samples, t.seed);
    ts.options.description = "test split: " + std::to_string(ts.samples.size()) + " NIAH samples";
    return ts;
  }
  CalibrationOptions tc = o.calib;
  tc.objective = t.objective;
  tc.lengths = ts.lengths;
  tc.samples = t.samples;
  tc.seed = t.seed;
  tc.swa = o.swa, tc.chat = o.chat;
  tc.solved_only = false;  // the test data stays unfiltered
  tc.option = "--test-objective";
  Calibration c = make_calibration(*e.tokenizer, tc, e.model.get());
  ts.samples = std::move(c.samples);
  ts.options.exact_weight = c.exact_weight;
  ts.options.logprob_weight = c.logprob_weight;
  ts.exact_metric = c.exact_weight > 0;
  ts.options.description = "test: " + c.description;
  return ts;
}

std::vector<TaskSample> niah_test_samples(const Tokenizer& tok, const ObjectiveSpec& calib,
                                          const ExperimentOptions& o, const std::vector<int>& lengths,
                                          int depths, int samples, uint64_t seed) {
  check_test_objective(calib, "");
  return generate_niah(tok, niah_options(calib.spec, lengths, depths, samples, seed, Split::test,
                                         o.calib.haystack, chat_wrap_for(tok, o.chat)));
}

}  // namespace bosch::search
