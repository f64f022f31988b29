// Flags that describe an experiment (model data, calibration, SWA shape), shared by
// `bosch baseline` and `bosch compare` (search/experiment.h builds the experiment from them).
#pragma once
#include <CLI/CLI.hpp>

#include "search/experiment.h"

namespace bosch::cli {

void add_experiment_options(CLI::App& app, search::ExperimentOptions& e, bool& no_chat);

}  // namespace bosch::cli
