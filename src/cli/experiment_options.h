// Flags that describe an experiment (model data, calibration, SWA shape), shared by
// `bosch baseline` and `bosch compare` (search/experiments/experiment.h builds the experiment from them).
#pragma once
#include <CLI/CLI.hpp>

#include "cli/options.h"

#include "search/experiments/experiment.h"

namespace bosch::cli {

void add_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat);
// `--destroy` (search and compare): stage 3's destroy share was replaced by destroy sets of 2-8
// heads (issue #39); the flag fails with a message naming what replaced it.
void add_removed_destroy_flag(CLI::App& app);

}  // namespace bosch::cli
