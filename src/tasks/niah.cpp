#include "tasks/niah.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "util/error.h"
#include "util/progress.h"

namespace bosch {

namespace {

enum class Kind { single, multikey, multivalue, multiquery, passkey };

struct FamilySpec {
  NiahFamily id;
  const char* name;
  Kind kind;
  bool noise_haystack, uuid_keys, uuid_values;
  int n_needles;
};

const FamilySpec kFamilies[] = {
    {NiahFamily::single_noise, "single_noise", Kind::single, true, false, false, 1},
    {NiahFamily::single_text, "single_text", Kind::single, false, false, false, 1},
    {NiahFamily::single_uuid, "single_uuid", Kind::single, false, false, true, 1},
    {NiahFamily::multikey, "multikey", Kind::multikey, false, false, false, 4},
    {NiahFamily::multikey_uuid, "multikey_uuid", Kind::multikey, false, true, true, 4},
    {NiahFamily::multivalue, "multivalue", Kind::multivalue, false, false, false, 4},
    {NiahFamily::multiquery, "multiquery", Kind::multiquery, false, false, false, 4},
    {NiahFamily::passkey, "passkey", Kind::passkey, true, false, false, 1},
};

const FamilySpec& spec_of(NiahFamily f) {
  for (const auto& s : kFamilies)
    if (s.id == f) return s;
  fail("unknown NIAH family id {}", static_cast<int>(f));
}

struct Needle {
  std::string text;
  double depth;
};

// Everything of a sample except the haystack: needles, question, answers.
struct Content {
  std::vector<Needle> needles;
  std::string intro, question, answer_prefix;
  std::vector<std::string> answers, keys, values;
};

std::string join_keys(const std::vector<std::string>& k) {
  std::string s;
  for (size_t i = 0; i < k.size(); ++i) {
    if (i) s += (i + 1 == k.size()) ? ", and " : ", ";
    s += k[i];
  }
  return s;
}

Content make_content(const FamilySpec& fs, double depth, Split split, TaskRng& rng) {
  Content c;
  auto distinct = [&](std::set<std::string>& seen, auto draw) {
    for (;;) {
      std::string v = draw();
      if (seen.insert(v).second) return v;
    }
  };
  if (fs.kind == Kind::passkey) {
    std::string v = draw_number(split, rng, 5);
    c.intro = "There is an important info hidden inside a lot of irrelevant text. Find it and "
              "memorize it. I will quiz you about the important information there.";
    c.needles.push_back({fmt::format("The pass key is {0}. Remember it. {0} is the pass key.", v), depth});
    c.question = "What is the pass key?";
    c.answer_prefix = "The pass key is";
    c.answers = {v};
    c.values = {v};
    return c;
  }
  const std::string type = fs.uuid_values ? "uuid" : "number";
  std::set<std::string> seen_keys, seen_values;
  auto draw_key = [&] {
    return distinct(seen_keys, [&] { return fs.uuid_keys ? draw_uuid(split, rng) : draw_word_key(split, rng); });
  };
  auto draw_value = [&] {
    return distinct(seen_values, [&] { return fs.uuid_values ? draw_uuid(split, rng) : draw_number(split, rng, 7); });
  };
  const int n = fs.n_needles;
  std::string shared_key = fs.kind == Kind::multivalue ? draw_key() : "";
  for (int i = 0; i < n; ++i) {
    c.keys.push_back(fs.kind == Kind::multivalue ? shared_key : draw_key());
    c.values.push_back(draw_value());
    double d = i == 0 ? depth : rng.uniform01();
    c.needles.push_back({fmt::format("One of the special magic {}s for {} is: {}.", type, c.keys[i], c.values[i]), d});
  }
  c.intro = fmt::format("Some special magic {0}s are hidden within the following text. Make sure to "
                        "memorize it. I will quiz you about the {0}s afterwards.", type);
  switch (fs.kind) {
    case Kind::single:
    case Kind::multikey:
      c.question = fmt::format("What is the special magic {} for {} mentioned in the provided text?", type, c.keys[0]);
      c.answer_prefix = fmt::format("The special magic {} for {} mentioned in the provided text is:", type, c.keys[0]);
      c.answers = {c.values[0]};
      break;
    case Kind::multivalue: {
      c.question = fmt::format("What are all the special magic {}s for {} mentioned in the provided text?", type, shared_key);
      c.answer_prefix = fmt::format("The special magic {}s for {} mentioned in the provided text are:", type, shared_key);
      std::vector<int> order(n);
      for (int i = 0; i < n; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c.needles[a].depth < c.needles[b].depth; });
      for (int i : order) c.answers.push_back(c.values[i]);  // document order
      break;
    }
    case Kind::multiquery: {
      std::string keys = join_keys(c.keys);
      c.question = fmt::format("What are all the special magic {}s for {} mentioned in the provided text?", type, keys);
      c.answer_prefix = fmt::format("The special magic {}s for {} mentioned in the provided text are:", type, keys);
      c.answers = c.values;
      break;
    }
    case Kind::passkey: break;
  }
  return c;
}

// Haystack sentences with the needles between them, joined by single spaces.
std::string build_context(const std::vector<std::string>& sentences, size_t k,
                          const std::vector<Needle>& needles) {
  // (boundary index, needle); needles sharing a boundary keep depth order (then needle order),
  // the order multivalue answers are listed in.
  std::vector<std::pair<size_t, int>> at;
  for (size_t j = 0; j < needles.size(); ++j)
    at.push_back({static_cast<size_t>(std::lround(needles[j].depth * static_cast<double>(k))), static_cast<int>(j)});
  std::stable_sort(at.begin(), at.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (needles[a.second].depth != needles[b.second].depth) return needles[a.second].depth < needles[b.second].depth;
    return a.second < b.second;
  });
  std::string out;
  auto put = [&](const std::string& s) {
    if (!out.empty()) out += ' ';
    out += s;
  };
  size_t next = 0;
  for (size_t i = 0; i <= k; ++i) {
    while (next < at.size() && at[next].first == i) put(needles[at[next++].second].text);
    if (i < k) put(sentences[i]);
  }
  return out;
}

}  // namespace

const std::vector<NiahFamily>& all_niah_families() {
  static const std::vector<NiahFamily> all = [] {
    std::vector<NiahFamily> v;
    for (const auto& s : kFamilies) v.push_back(s.id);
    return v;
  }();
  return all;
}

const char* niah_family_name(NiahFamily f) { return spec_of(f).name; }

NiahFamily parse_niah_family(std::string_view name) {
  std::string known;
  for (const auto& s : kFamilies) {
    if (name == s.name) return s.id;
    known += known.empty() ? s.name : std::string(", ") + s.name;
  }
  fail("--suite: unknown NIAH family '{}' (known: {})", name, known);
}

std::vector<NiahFamily> parse_niah_suite(const std::string& suite) {
  if (suite == "niah") return all_niah_families();
  check(suite.starts_with("niah:"), "--suite: expected 'niah' or 'niah:FAMILY,...', got '{}'", suite);
  std::vector<NiahFamily> out;
  std::string rest = suite.substr(5);
  size_t b = 0;
  while (b <= rest.size()) {
    size_t e = rest.find(',', b);
    if (e == std::string::npos) e = rest.size();
    if (e > b) {
      NiahFamily f = parse_niah_family(std::string_view(rest).substr(b, e - b));
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    }
    b = e + 1;
  }
  check(!out.empty(), "--suite '{}': no family named after 'niah:'", suite);
  return out;
}

std::vector<double> depth_grid(int n) {
  check(n >= 1, "--depths: expected at least 1 depth, got {}", n);
  if (n == 1) return {0.5};
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = static_cast<double>(i) / (n - 1);
  return d;
}

uint64_t niah_sample_seed(uint64_t seed, Split split, NiahFamily f, int length, double depth, int index) {
  uint64_t h = hash_combine(seed, static_cast<uint64_t>(split));
  h = hash_combine(h, static_cast<uint64_t>(f));
  h = hash_combine(h, static_cast<uint64_t>(length));
  h = hash_combine(h, static_cast<uint64_t>(std::llround(depth * 1e6)));
  return hash_combine(h, static_cast<uint64_t>(index));
}

TaskSample make_niah_sample(const Tokenizer& tok, NiahFamily f, int length, double depth,
                            Split split, uint64_t sample_seed, const Haystack& text_haystack,
                            const ChatWrap& chat) {
  const FamilySpec& fs = spec_of(f);
  check(depth >= 0 && depth <= 1, "NIAH depth must be within [0, 1], got {}", depth);
  TaskRng rng(sample_seed);
  Content c = make_content(fs, depth, split, rng);

  std::string continuation;
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < c.answers.size(); ++i) {
    continuation += i ? ", " : " ";
    ranges.push_back({continuation.size(), continuation.size() + c.answers[i].size()});
    continuation += c.answers[i];
  }

  static const Haystack noise = Haystack::noise();
  Haystack::Stream stream = (fs.noise_haystack ? noise : text_haystack).stream(TaskRng(hash_combine(sample_seed, 0x4a57)));
  std::vector<std::string> sentences;
  auto prompt_for = [&](size_t k) {
    while (sentences.size() < k) sentences.push_back(stream.next());
    std::string user = c.intro + "\n" + build_context(sentences, k, c.needles) + "\n" + c.question;
    return chat.wrap(user) + c.answer_prefix;
  };
  auto count = [&](size_t k) { return tok.encode(prompt_for(k) + continuation, tok.adds_bos()).size(); };

  size_t base = count(0);
  check(base <= static_cast<size_t>(length),
        "length {} is too short for NIAH family {}: the prompt and answer without any haystack "
        "already take {} tokens", length, fs.name, base);
  // Estimate sentences from the tokens of a few sentences, then search around it.
  prompt_for(16);
  size_t per16 = tok.encode(build_context(sentences, 16, {}), false).size();
  int estimate = static_cast<int>(static_cast<double>(length - base) * 16.0 / std::max<size_t>(per16, 1));
  int k = largest_fitting(estimate, [&](int kk) { return count(kk) <= static_cast<size_t>(length); });
  // Top up: the next sentence did not fit, a later shorter one may (a few tries).
  for (int tries = 0; tries < 8; ++tries) {
    if (count(k + 1) <= static_cast<size_t>(length)) ++k;
    else sentences.erase(sentences.begin() + k);
  }

  TaskSample s;
  s.family = fs.name;
  s.split = split;
  s.length = length;
  s.depth = depth;
  s.seed = sample_seed;
  s.keys = c.keys;
  s.values = c.values;
  tokenize_sample(tok, prompt_for(k), continuation, ranges, s);
  return s;
}

size_t niah_prompt_tokens(const Tokenizer& tok, NiahFamily f, Split split, uint64_t seed, const ChatWrap& chat) {
  const FamilySpec& fs = spec_of(f);
  size_t most = 0;
  for (int i = 0; i < 4; ++i) {  // keys and values vary in length: the longest of a few
    TaskRng rng(niah_sample_seed(seed, split, f, 0, 0.5, i));
    const Content c = make_content(fs, 0.5, split, rng);
    std::string continuation;
    for (size_t a = 0; a < c.answers.size(); ++a) continuation += (a ? ", " : " ") + c.answers[a];
    const std::string user = c.intro + "\n" + build_context({}, 0, c.needles) + "\n" + c.question;
    most = std::max(most, tok.encode(chat.wrap(user) + c.answer_prefix + continuation, tok.adds_bos()).size());
  }
  return most;
}

int niah_auto_length(const Tokenizer& tok, const std::vector<NiahFamily>& families, Split split,
                     const ChatWrap& chat, int room, int max_length) {
  size_t need = 0;
  std::string longest;
  for (NiahFamily f : families) {
    const size_t n = niah_prompt_tokens(tok, f, split, 0, chat);
    if (n > need) need = n, longest = niah_family_name(f);
  }
  for (int len = 256; len <= max_length; len *= 2)
    if (need + static_cast<size_t>(room) <= static_cast<size_t>(len)) return len;
  fail("no NIAH length up to the model's context {} fits family {} ({} prompt tokens + {} of "
       "haystack); give --lengths", max_length, longest, need, room);
}

NiahOptions niah_options(const std::string& suite, const std::vector<int>& lengths, int depths,
                         int samples, uint64_t seed, Split split, const std::string& haystack,
                         const ChatWrap& chat) {
  NiahOptions no;
  no.families = parse_niah_suite(suite);
  no.lengths = lengths;
  no.depths = depth_grid(depths);
  no.samples = samples;
  no.seed = seed;
  no.split = split;
  no.text_haystack = Haystack::from_arg(haystack);
  no.chat = chat;
  return no;
}

std::vector<TaskSample> generate_niah(const Tokenizer& tok, const NiahOptions& opt) {
  check(opt.samples >= 1, "--samples: expected at least 1, got {}", opt.samples);
  std::vector<TaskSample> out;
  size_t total = opt.families.size() * opt.lengths.size() * opt.depths.size() * opt.samples;
  Progress progress("generating NIAH samples", total);
  for (NiahFamily f : opt.families)
    for (int len : opt.lengths)
      for (double d : opt.depths)
        for (int i = 0; i < opt.samples; ++i) {
          uint64_t seed = niah_sample_seed(opt.seed, opt.split, f, len, d, i);
          out.push_back(make_niah_sample(tok, f, len, d, opt.split, seed, opt.text_haystack, opt.chat));
          progress.add(1, niah_family_name(f));
        }
  return out;
}

}  // namespace bosch
