// `bosch compare` behind its flags (cli/cmd_compare.cpp only declares them): builds the
// experiment, the held-out test objective and the baselines, runs run_compare (compare.h) or,
// for --objective synthetic:SHAPE[:SEED], run_simulated_compare (simulated_compare.h), prints
// the tables and writes --json, --report and the journals.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "search/experiments/experiment.h"
#include "search/stages/bosch_search.h"

namespace bosch::search {

struct CompareRunOptions {
  ExperimentOptions exp;  // model (resolved by the caller), calibration, SWA shape, seed
  SearchOptions search;   // budgets; the seed is exp.seed
  std::string ratios = "0.25,0.5,0.75,0.875", methods = "all", json_out, report_dir, journal_dir;
  double alpha = 1.0;
  std::vector<int> test_lengths;  // default: the calibration lengths
  int test_depths = 5, test_samples = 1;
  int64_t test_seed = -1;         // default: --seed (the split alone keeps the data disjoint)
  std::string test_objective;     // "": the NIAH test split of the calibration families
  bool resume = false;
  int instances = 100;            // simulator objectives: seeded instances
  int sim_calib_samples = 0;      // ... calibration samples per instance (0: the simulator's 64)
};

// Every output is checked before the run; under MPI rank 0 alone prints and writes.
void run_compare(const CompareRunOptions& o);

}  // namespace bosch::search
