// Flags shared by the commands that run experiments, each declared once: the experiment's
// (model data, calibration, SWA shape, seed: search/experiments/experiment.h builds the
// experiment from them) for `bosch search`, `baseline`, `compare` and `pairs`, and the search's
// (budgets, --alpha) for `bosch search` and `bosch compare`.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/options.h"

#include "search/experiments/experiment.h"

namespace bosch::cli {

// `baseline_flags`: also --duo and --razor-period, the inputs of the baselines (not `bosch search`,
// which runs none).
void add_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat, bool baseline_flags = true);
// The search's budgets, --alpha (the ratio penalty's weight) and the removed --destroy (it fails
// naming what replaced it, issue #39). `ls_budget`: also --budget-ls (`bosch search`; compare
// gives ls the budget bosch was charged).
void add_search_options(CLI::App& app, search::SearchOptions& s, double& alpha, bool ls_budget);

}  // namespace bosch::cli
