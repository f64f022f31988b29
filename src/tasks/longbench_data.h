// Reader for the official LongBench JSONL files (one JSON object per line with fields input,
// context, answers, all_classes, length, dataset, _id), as published on the Hugging Face hub
// (data/<dataset>.jsonl and data/<dataset>_e.jsonl for LongBench-E).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/longbench_prompts.h"

namespace bosch::longbench {

struct Sample {
  std::string input, context;
  std::vector<std::string> answers;
  std::vector<std::string> all_classes;  // empty when the file has null
  int64_t length = 0;                    // words (en) / characters (zh) of the context
  std::string dataset;                   // the `dataset` field as written
  std::string id;                        // `_id`
};

struct DatasetFile {
  std::string path;
  const TaskSpec* task = nullptr;  // from the lines' `dataset` field
  bool longbench_e = false;        // dataset field (or file name) ends with "_e"
  std::vector<Sample> samples;
};

// Reads one JSONL file. Throws Error naming the file, the line and the field for: invalid
// JSON, a missing or wrong-typed field, an unknown dataset, lines of different datasets,
// classification datasets without all_classes, retrieval answers without a paragraph id.
// max_samples > 0 keeps the first max_samples lines (the rest is not parsed). Blank lines
// are skipped.
DatasetFile read_dataset_file(const std::string& path, int max_samples = 0);

// Expands DIR_OR_FILES: a directory contributes its <known dataset>[_e].jsonl files (other
// files are ignored; none found is an error), a file is taken as is. Result ordered as given,
// each directory's files in the official dataset order. Missing paths throw Error.
std::vector<std::string> expand_data_paths(const std::vector<std::string>& paths);

}  // namespace bosch::longbench
