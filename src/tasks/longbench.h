// LongBench (v1) suite: the entry point for `bosch eval MODEL --suite longbench --data DIR_OR_FILES`.
// run_longbench (longbench_run.h) reads the official JSONL files (longbench_data.h), builds the
// official prompts (longbench_prompts.h), generates greedily and scores with the official
// metrics (longbench_metrics.h); LongBenchResult (longbench_result.h) has to_json() and table().
#pragma once
#include "tasks/longbench_data.h"
#include "tasks/longbench_metrics.h"
#include "tasks/longbench_prompts.h"
#include "tasks/longbench_result.h"
#include "tasks/longbench_run.h"
