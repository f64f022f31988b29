#include "tasks/longbench_data.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "tasks/longbench_text.h"
#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch::longbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct LineContext {
  const std::string& path;
  size_t line;
};

const json& field(const json& obj, const char* name, const LineContext& at) {
  auto it = obj.find(name);
  check(it != obj.end(), "{}:{}: missing field '{}'", at.path, at.line, name);
  return *it;
}

std::string string_field(const json& obj, const char* name, const LineContext& at) {
  const json& v = field(obj, name, at);
  check(v.is_string(), "{}:{}: field '{}' must be a string (got {})", at.path, at.line, name,
        v.type_name());
  return v.get<std::string>();
}

// A list of strings; `nullable` accepts null (all_classes is null outside trec/lsht).
std::vector<std::string> strings_field(const json& obj, const char* name, bool nullable,
                                       const LineContext& at) {
  const json& v = field(obj, name, at);
  if (nullable && v.is_null()) return {};
  check(v.is_array(), "{}:{}: field '{}' must be a list of strings{} (got {})", at.path, at.line,
        name, nullable ? " or null" : "", v.type_name());
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    check(v[i].is_string(), "{}:{}: field '{}'[{}] must be a string (got {})", at.path, at.line,
          name, i, v[i].type_name());
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

bool ends_with_e(std::string_view s) { return s.size() > 2 && s.substr(s.size() - 2) == "_e"; }

}  // namespace

DatasetFile read_dataset_file(const std::string& path, int max_samples) {
  DatasetFile out;
  out.path = path;
  const std::string text = read_file(path, kMaxTextBytes, "LongBench data");
  size_t pos = 0, line_no = 0;
  while (pos < text.size() && (max_samples <= 0 || out.samples.size() < size_t(max_samples))) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    LineContext at{path, line_no};
    const json obj = parse_json_checked(line, fmt::format("{}:{}", path, line_no));
    check(obj.is_object(), "{}:{}: expected a JSON object (got {})", path, line_no, obj.type_name());
    Sample s;
    s.input = string_field(obj, "input", at);
    s.context = string_field(obj, "context", at);
    s.answers = strings_field(obj, "answers", false, at);
    s.all_classes = strings_field(obj, "all_classes", true, at);
    s.length = json_int(field(obj, "length", at), fmt::format("{}:{}", path, line_no), "length", 0,
                        std::numeric_limits<int64_t>::max());
    s.dataset = string_field(obj, "dataset", at);
    s.id = string_field(obj, "_id", at);

    const TaskSpec* task = find_task(s.dataset);
    if (!task) {
      try {
        task_or_fail(s.dataset);
      } catch (const Error& e) {
        fail("{}:{}: field 'dataset': {}", path, line_no, e.what());
      }
    }
    if (!out.task) {
      out.task = task;
      out.longbench_e = ends_with_e(s.dataset) || ends_with_e(fs::path(path).stem().string());
    }
    check(task == out.task, "{}:{}: field 'dataset' is '{}' but earlier lines are '{}'", path,
          line_no, excerpt(s.dataset), out.task->name);
    if (task->metric == Metric::Classification)
      check(!s.all_classes.empty(), "{}:{}: field 'all_classes' must list the classes for {}",
            path, line_no, task->name);
    if (task->metric == Metric::Retrieval || task->metric == Metric::RetrievalZh) {
      const char* pattern = task->metric == Metric::Retrieval ? R"(Paragraph (\d+))" : R"(段落(\d+))";
      for (size_t i = 0; i < s.answers.size(); ++i)
        check(!regex_findall(pattern, s.answers[i]).empty(),
              "{}:{}: field 'answers'[{}] = '{}' has no paragraph id ({})", path, line_no, i,
              excerpt(s.answers[i]), pattern);
    }
    out.samples.push_back(std::move(s));
  }
  check(out.task != nullptr, "{}: no samples (empty file)", path);
  return out;
}

std::vector<std::string> expand_data_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    check(fs::exists(p, ec), "longbench data: '{}' does not exist", p);
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    // Official order; the plain file before its LongBench-E variant.
    std::vector<std::string> found;
    for (const auto& t : all_tasks()) {
      for (const std::string& stem : {std::string(t.name), std::string(t.name) + "_e"}) {
        fs::path f = fs::path(p) / (stem + ".jsonl");
        if (fs::is_regular_file(f, ec)) found.push_back(f.string());
      }
    }
    check(!found.empty(),
          "longbench data: directory '{}' has no <dataset>.jsonl file of a LongBench dataset", p);
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace bosch::longbench
