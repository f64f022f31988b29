#include "tasks/longbench_run.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "model/generate.h"
#include "model/kv_cache.h"
#include "tasks/longbench_text.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/utf8.h"

namespace bosch {

namespace longbench {

namespace {

std::vector<int32_t> encode_with_bos(const Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> ids = tok.encode(text, false);
  if (tok.adds_bos() && tok.bos_id() >= 0 && (ids.empty() || ids[0] != tok.bos_id()))
    ids.insert(ids.begin(), tok.bos_id());
  return ids;
}

// End-of-generation ids of the vocabulary (EOS, <|im_end|>, <|eot_id|>, ...).
std::vector<int32_t> eog_ids(const Tokenizer& tok) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tok.vocab_size(); ++id)
    if (tok.is_eog(id)) ids.push_back(id);
  if (tok.eos_id() >= 0 && std::find(ids.begin(), ids.end(), tok.eos_id()) == ids.end())
    ids.push_back(tok.eos_id());
  return ids;
}

// samsum in pred.py: eos_token_id = [eos, "\n"] and min_length = prompt + 1, i.e. the first new
// token may not be a stop token. `generate` has no such constraint, so this loop does greedy
// decoding itself with the stop ids masked at the first step.
std::vector<int32_t> generate_min_one(const Model& m, const AttentionPlan& plan,
                                      const std::vector<int32_t>& prompt, int max_new,
                                      const std::vector<int32_t>& stops) {
  std::vector<int32_t> out;
  if (max_new <= 0) return out;
  KVCache cache(m.config(), plan, int64_t(prompt.size()) + max_new);
  SamplingParams greedy;
  greedy.temperature = 0.0;
  uint64_t rng = 0;
  const int vocab = m.config().vocab_size;
  std::vector<float> logits = m.forward_next(prompt, cache);
  for (int step = 0; step < max_new; ++step) {
    if (step == 0)
      for (int32_t id : stops)
        if (id >= 0 && id < vocab) logits[id] = -std::numeric_limits<float>::infinity();
    int32_t t = sample_token(logits.data(), vocab, greedy, rng);
    if (std::find(stops.begin(), stops.end(), t) != stops.end()) break;
    out.push_back(t);
    if (step + 1 < max_new) logits = m.forward_next({t}, cache);
  }
  return out;
}

}  // namespace

std::string decode_skip_special(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<int32_t> kept;
  for (int32_t id : ids)
    if (id != tok.bos_id() && id != tok.eos_id() && !tok.is_eog(id)) kept.push_back(id);
  return utf8::sanitize(tok.decode(kept));
}

PromptIds build_prompt(const Tokenizer& tok, const TaskSpec& task, const Sample& s, int budget,
                       bool chat) {
  PromptIds out;
  std::string prompt = fill_template(task.prompt, s.context, s.input);
  std::vector<int32_t> ids = encode_with_bos(tok, prompt);
  if (ids.size() > size_t(budget)) {
    // pred.py decodes both halves back to text (skip_special_tokens) and re-tokenizes.
    std::vector<int32_t> cut = middle_truncate(ids, budget);
    const size_t half = cut.size() / 2;
    prompt = decode_skip_special(tok, {cut.begin(), cut.begin() + half}) +
             decode_skip_special(tok, {cut.begin() + half, cut.end()});
    out.truncated = true;
  }
  if (chat && task.chat && tok.has_chat_template()) prompt = tok.apply_chat_template(prompt);
  out.ids = encode_with_bos(tok, prompt);
  return out;
}

}  // namespace longbench

LongBenchResult run_longbench(const Model& m, const Tokenizer& tok, const AttentionPlan& plan,
                              const LongBenchOptions& opt) {
  using namespace longbench;
  const auto t0 = std::chrono::steady_clock::now();
  check(!opt.data.empty(), "longbench: no data given (--data DIR_OR_FILES)");
  check(opt.max_prompt_tokens >= 2, "longbench: max prompt tokens must be at least 2 (got {})",
        opt.max_prompt_tokens);
  for (const auto& name : opt.datasets) task_or_fail(name);

  std::vector<DatasetFile> files;
  for (const auto& path : expand_data_paths(opt.data)) {
    DatasetFile f = read_dataset_file(path, opt.max_samples);
    if (!opt.datasets.empty() &&
        std::find(opt.datasets.begin(), opt.datasets.end(), f.task->name) == opt.datasets.end())
      continue;
    files.push_back(std::move(f));
  }
  check(!files.empty(), "longbench: none of the data files holds a selected dataset");

  size_t total = 0;
  for (const auto& f : files) total += f.samples.size();
  const std::vector<int32_t> eog = eog_ids(tok);
  std::vector<int32_t> newline = tok.encode("\n", false);

  LongBenchResult result;
  Progress progress("longbench", total);
  for (const auto& f : files) {
    const TaskSpec& task = *f.task;
    std::vector<std::string> preds;
    std::vector<LongBenchSampleResult> info;
    for (const auto& s : f.samples) {
      PromptIds prompt = build_prompt(tok, task, s, opt.max_prompt_tokens, opt.chat_template);
      std::vector<int32_t> gen;
      if (std::string_view(task.name) == "samsum") {
        std::vector<int32_t> stops = eog;
        if (!newline.empty()) stops.push_back(newline.back());
        gen = generate_min_one(m, plan, prompt.ids, task.max_new_tokens, stops);
      } else {
        SamplingParams p;
        p.temperature = 0.0;
        p.max_tokens = task.max_new_tokens;
        p.stop_ids = eog;
        gen = generate(m, plan, prompt.ids, p);
      }
      preds.push_back(decode_skip_special(tok, gen));
      LongBenchSampleResult sr;
      sr.prompt_tokens = int(prompt.ids.size());
      sr.new_tokens = int(gen.size());
      sr.truncated = prompt.truncated;
      info.push_back(sr);
      progress.add(1, task.name);
    }
    LongBenchDatasetResult r = score_longbench_dataset(f, preds);
    for (size_t i = 0; i < r.samples.size(); ++i) {
      r.samples[i].prompt_tokens = info[i].prompt_tokens;
      r.samples[i].new_tokens = info[i].new_tokens;
      r.samples[i].truncated = info[i].truncated;
    }
    result.datasets.push_back(std::move(r));
  }
  progress.finish();
  aggregate_longbench(result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace bosch
