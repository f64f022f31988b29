// The 21 LongBench (v1) datasets as the official pred.py / eval.py treat them: prompt template
// (config/dataset2prompt.json), max new tokens (config/dataset2maxlen.json), metric, whether
// the chat template is applied and whether the first-line rule applies; plus template filling
// and the middle truncation of pred.py.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/longbench_metrics.h"

namespace bosch::longbench {

struct TaskSpec {
  const char* name;          // dataset name, e.g. "hotpotqa"
  const char* prompt;        // template with {context} and {input}
  int max_new_tokens;        // dataset2maxlen
  Metric metric;             // eval.py dataset2metric
  bool chat;                 // false for trec, triviaqa, samsum, lsht, lcc, repobench-p
  bool first_line;           // eval.py: trec, triviaqa, samsum, lsht
  bool in_longbench_e;       // has a <name>_e.jsonl (LongBench-E)
};

// All 21 datasets in the official order of pred.py.
const std::vector<TaskSpec>& all_tasks();
// The spec of `name` ("hotpotqa"; a LongBench-E name "hotpotqa_e" gives the same spec), or
// nullptr when unknown.
const TaskSpec* find_task(std::string_view name);
// Like find_task but throws Error listing the known names.
const TaskSpec& task_or_fail(std::string_view name);

// prompt_format.format(context=..., input=...): replaces {context} and {input}; values are
// inserted verbatim. Throws Error on any other {field} in the template.
std::string fill_template(std::string_view tmpl, std::string_view context, std::string_view input);

// The first budget/2 and the last budget/2 ids when ids.size() > budget (pred.py:
// half = int(max_length/2); ids[:half] + ids[-half:]), else ids unchanged. budget >= 2.
std::vector<int32_t> middle_truncate(const std::vector<int32_t>& ids, int budget);

}  // namespace bosch::longbench
