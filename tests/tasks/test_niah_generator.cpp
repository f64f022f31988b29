// NIAH generator: determinism, exact length fitting, needle placement, answer spans, splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>

#include "fake_tokenizers.h"
#include "tasks/train_text.h"
#include "tasks/niah.h"
#include "util/error.h"


using namespace bosch;
using bosch::testing::ByteTokenizer;
using bosch::testing::WordTokenizer;

namespace {

TaskSample one(const Tokenizer& tok, NiahFamily f, int len, double depth, uint64_t seed = 7,
               Split split = Split::test, ChatWrap chat = {}) {
  return make_niah_sample(tok, f, len, depth, split, niah_sample_seed(seed, split, f, len, depth, 0),
                          Haystack::markov(), chat);
}

// The haystack text between the intro line and the question line.
std::string context_of(const TaskSample& s) {
  size_t b = s.prompt.find('\n');
  size_t e = s.prompt.rfind('\n', s.prompt.find("What"));
  return s.prompt.substr(b + 1, e - b - 1);
}

}  // namespace

TEST(NiahSuite, ParsesFamiliesAndRejectsUnknown) {
  EXPECT_EQ(parse_niah_suite("niah").size(), 8u);
  auto f = parse_niah_suite("niah:multikey,passkey,multikey");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0], NiahFamily::multikey);
  EXPECT_EQ(f[1], NiahFamily::passkey);
  try {
    parse_niah_suite("niah:single,passkey");
    FAIL() << "unknown family accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("single_noise"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_niah_suite("ruler"), Error);
  auto d = depth_grid(11);
  ASSERT_EQ(d.size(), 11u);
  EXPECT_DOUBLE_EQ(d[0], 0.0);
  EXPECT_DOUBLE_EQ(d[5], 0.5);
  EXPECT_DOUBLE_EQ(d[10], 1.0);
  EXPECT_EQ(depth_grid(1), std::vector<double>{0.5});
}

TEST(NiahGenerator, DeterministicFromSeed) {
  ByteTokenizer tok;
  NiahOptions o;
  o.lengths = {1000, 1500};
  o.depths = depth_grid(3);
  o.seed = 42;
  auto a = generate_niah(tok, o);
  auto b = generate_niah(tok, o);
  ASSERT_EQ(a.size(), 8u * 2 * 3);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt, b[i].prompt);
    EXPECT_EQ(a[i].prompt_ids, b[i].prompt_ids);
    EXPECT_EQ(a[i].continuation_ids, b[i].continuation_ids);
  }
  o.seed = 43;
  auto c = generate_niah(tok, o);
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i].prompt == c[i].prompt;
  EXPECT_EQ(same, 0);
}

TEST(NiahGenerator, FitsRequestedLengthExactly) {
  ByteTokenizer bytes;
  WordTokenizer words;
  for (const Tokenizer* tok : {static_cast<const Tokenizer*>(&bytes), static_cast<const Tokenizer*>(&words)})
    for (bool chat : {false, true})
      for (NiahFamily f : all_niah_families())
        for (int len : {1000, 2000, 5000}) {
          auto s = one(*tok, f, len, 0.3, 1, Split::test, chat ? bosch::testing::fake_chat() : ChatWrap{});
          SCOPED_TRACE(fmt::format("{} len {} chat {} words {}", s.family, len, chat, tok == &words));
          EXPECT_LE(s.n_tokens(), static_cast<size_t>(len));
          // Short of the length by less than one haystack sentence: <= 16 words (markov) or
          // 22 bytes (noise); the byte tokenizer's markov sentences are longer.
          size_t slack = tok == &words ? 18 : (f == NiahFamily::single_noise || f == NiahFamily::passkey ? 23 : 130);
          EXPECT_GE(s.n_tokens() + slack, static_cast<size_t>(len));
          // The ids are the tokenizer's own tokenization of the texts.
          EXPECT_EQ(s.prompt_ids, tok->encode(s.prompt, true));
          auto all = tok->encode(s.prompt + s.continuation, true);
          std::vector<int32_t> joined(s.prompt_ids);
          joined.insert(joined.end(), s.continuation_ids.begin(), s.continuation_ids.end());
          EXPECT_EQ(all, joined);
          EXPECT_EQ(s.prompt_ids[0], tok->bos_id());
          if (chat) {
            EXPECT_EQ(s.prompt.rfind("<|im_start|>user\n", 0), 0u);
            EXPECT_NE(s.prompt.find("<|im_end|>\n<|im_start|>assistant\nThe "), std::string::npos);
          }
        }
}

TEST(NiahGenerator, TooShortLengthIsAnError) {
  ByteTokenizer tok;
  try {
    one(tok, NiahFamily::multiquery, 100, 0.5);
    FAIL() << "accepted a length below the prompt itself";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too short"), std::string::npos) << e.what();
  }
}

TEST(NiahGenerator, AnswersAreTheContinuationSpans) {
  ByteTokenizer bytes;
  WordTokenizer words;
  for (const Tokenizer* tok : {static_cast<const Tokenizer*>(&bytes), static_cast<const Tokenizer*>(&words)})
    for (NiahFamily f : all_niah_families()) {
      auto s = one(*tok, f, 1200, 0.5);
      SCOPED_TRACE(s.family);
      std::string expect;
      for (size_t i = 0; i < s.answers.size(); ++i) expect += (i ? ", " : " ") + s.answers[i].text;
      EXPECT_EQ(s.continuation, expect);
      for (const auto& a : s.answers) {
        ASSERT_LE(a.begin + a.ids.size(), s.continuation_ids.size());
        EXPECT_TRUE(std::equal(a.ids.begin(), a.ids.end(), s.continuation_ids.begin() + a.begin));
        EXPECT_EQ(tok->decode(a.ids), " " + a.text);  // the leading space belongs to the answer
        // The answer is a needle's value and the needle is in the prompt.
        EXPECT_NE(std::find(s.values.begin(), s.values.end(), a.text), s.values.end());
        EXPECT_NE(s.prompt.find(a.text), std::string::npos);
      }
      size_t expected = (f == NiahFamily::multivalue || f == NiahFamily::multiquery) ? 4 : 1;
      EXPECT_EQ(s.answers.size(), expected);
      if (f == NiahFamily::single_uuid || f == NiahFamily::multikey_uuid) {
        EXPECT_EQ(s.answers[0].text.size(), 36u);
      }
      if (f == NiahFamily::passkey) {
        EXPECT_EQ(s.answers[0].text.size(), 5u);
      }
      if (f == NiahFamily::single_noise) {
        EXPECT_NE(s.prompt.find("The grass is green. The sky is blue."), std::string::npos);
      }
    }
}

TEST(NiahGenerator, MultiAnswerOrder) {
  ByteTokenizer tok;
  for (int seed = 0; seed < 5; ++seed) {
    auto mv = one(tok, NiahFamily::multivalue, 1500, 0.5, seed);
    for (size_t i = 1; i < mv.answers.size(); ++i)  // document order
      EXPECT_LT(mv.prompt.find(mv.answers[i - 1].text), mv.prompt.find(mv.answers[i].text));
    auto mq = one(tok, NiahFamily::multiquery, 1500, 0.5, seed);
    std::string question = mq.prompt.substr(mq.prompt.find("What are all"));
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(mq.answers[i].text, mq.values[i]);
    for (size_t i = 1; i < 4; ++i)  // the question names the keys in answer order
      EXPECT_LT(question.find(mq.keys[i - 1]), question.find(mq.keys[i]));
    auto mk = one(tok, NiahFamily::multikey, 1500, 0.5, seed);
    EXPECT_EQ(std::set<std::string>(mk.keys.begin(), mk.keys.end()).size(), 4u);  // distractors
    EXPECT_EQ(mk.answers[0].text, mk.values[0]);
    EXPECT_NE(question.find("mentioned in the provided text?"), std::string::npos);
  }
}

TEST(NiahGenerator, NeedleAtSentenceBoundary) {
  WordTokenizer tok;
  for (NiahFamily f : all_niah_families())
    for (double d : depth_grid(5)) {
      auto s = one(tok, f, 1200, d);
      SCOPED_TRACE(fmt::format("{} depth {}", s.family, d));
      std::string ctx = context_of(s);
      bool uuid = f == NiahFamily::single_uuid || f == NiahFamily::multikey_uuid;
      for (size_t i = 0; i < s.values.size(); ++i) {
        std::string needle = f == NiahFamily::passkey
            ? fmt::format("The pass key is {0}. Remember it. {0} is the pass key.", s.values[i])
            : fmt::format("One of the special magic {}s for {} is: {}.", uuid ? "uuid" : "number", s.keys[i], s.values[i]);
        size_t at = ctx.find(needle);
        ASSERT_NE(at, std::string::npos) << needle;
        if (at > 0) {
          EXPECT_EQ(ctx.substr(at - 2, 2), ". ");
        }
        size_t end = at + needle.size();
        if (end < ctx.size()) {
          EXPECT_EQ(ctx[end], ' ');
          EXPECT_TRUE(std::isupper(static_cast<unsigned char>(ctx[end + 1]))) << ctx.substr(end, 20);
        }
      }
    }
}

TEST(NiahGenerator, NeedleDepthPlacement) {
  ByteTokenizer tok;
  for (NiahFamily f : {NiahFamily::single_noise, NiahFamily::single_text, NiahFamily::passkey})
    for (double d : depth_grid(11)) {
      auto s = one(tok, f, 4000, d);
      std::string ctx = context_of(s);
      const std::string marker = f == NiahFamily::passkey ? "The pass key is " : "One of the special magic";
      size_t at = ctx.find(marker);
      ASSERT_NE(at, std::string::npos);
      // Fraction of haystack text before the needle (the needle itself excluded).
      size_t needle_len = ctx.find('.', ctx.find(s.values[0], at)) + 2 - at;
      double frac = static_cast<double>(at) / static_cast<double>(ctx.size() - needle_len);
      EXPECT_NEAR(frac, d, 0.04) << s.family << " depth " << d;
    }
}

TEST(NiahSplits, KeysAndValuesNeverShared) {
  ByteTokenizer tok;
  std::map<Split, std::set<std::string>> items;
  for (Split sp : {Split::train, Split::calib, Split::test}) {
    NiahOptions o;
    o.lengths = {1000};
    o.depths = depth_grid(4);
    o.samples = 3;
    o.split = sp;
    o.seed = 5;  // the same seed for every split
    for (const auto& s : generate_niah(tok, o)) {
      EXPECT_EQ(s.split, sp);
      for (const auto& k : s.keys) {
        items[sp].insert(k);
        EXPECT_EQ(split_of(k), sp) << k;
      }
      for (const auto& v : s.values) {
        items[sp].insert(v);
        EXPECT_EQ(split_of(v), sp) << v;
      }
    }
  }
  EXPECT_GT(items[Split::test].size(), 100u);
  for (Split a : {Split::train, Split::calib, Split::test}) {
    for (Split b : {Split::train, Split::calib, Split::test}) {
      if (a == b) continue;
      for (const auto& x : items[a]) {
        EXPECT_EQ(items[b].count(x), 0u) << x;
      }
    }
  }
  // Same seed, different split: different samples.
  EXPECT_NE(niah_sample_seed(1, Split::calib, NiahFamily::multikey, 1024, 0.5, 0),
            niah_sample_seed(1, Split::test, NiahFamily::multikey, 1024, 0.5, 0));
  EXPECT_THROW(parse_split("dev"), Error);
}

TEST(NiahSamples, JsonRoundTrip) {
  WordTokenizer tok;
  auto s = one(tok, NiahFamily::multivalue, 500, 0.25);
  auto j = sample_to_json(s);
  for (const char* f : {"prompt", "prompt_ids", "answers", "depth", "length", "family", "keys", "values"})
    EXPECT_TRUE(j.contains(f)) << f;
  auto r = sample_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(r.prompt_ids, s.prompt_ids);
  EXPECT_EQ(r.continuation_ids, s.continuation_ids);
  ASSERT_EQ(r.answers.size(), s.answers.size());
  EXPECT_EQ(r.answers[3].ids, s.answers[3].ids);
  EXPECT_EQ(r.answers[3].begin, s.answers[3].begin);
  EXPECT_EQ(r.seed, s.seed);
  j.erase("prompt_ids");
  try {
    sample_from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prompt_ids"), std::string::npos);
  }
}

TEST(Haystack, SentenceSplitAndFileHaystack) {
  auto s = Haystack::split_sentences("Hello there.  How are\nyou? Fine! 3.5 is a number. End");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[1], "How are you?");
  EXPECT_EQ(s[3], "3.5 is a number.");
  EXPECT_EQ(s[4], "End");
  std::string path = std::string(BOSCH_BINARY_DIR) + "/test_haystack.txt";
  { std::ofstream(path) << "Alpha beta gamma. Delta epsilon zeta.\nEta theta iota. Kappa lambda mu.\n"; }
  Haystack h = Haystack::from_file(path);
  EXPECT_EQ(h.description(), "file:" + path);
  ByteTokenizer tok;
  auto sample = make_niah_sample(tok, NiahFamily::single_text, 600, 0.5, Split::test, 3, h, {});
  EXPECT_NE(sample.prompt.find("Kappa lambda mu. Alpha beta gamma."), std::string::npos);
  EXPECT_LE(sample.n_tokens(), 600u);
  std::remove(path.c_str());
  EXPECT_THROW(Haystack::from_file(path), Error);
}

TEST(Markov, FixedLanguage) {
  MarkovText m;
  TaskRng a(11), b(11);
  std::string s1 = m.sentence(a);
  EXPECT_EQ(s1, m.sentence(b));
  EXPECT_TRUE(std::isupper(static_cast<unsigned char>(s1[0])));
  EXPECT_EQ(s1.back(), '.');
  // The successor of a word pair is one of few words (an n-gram table, not uniform noise).
  std::set<int> next;
  for (int i = 0; i < 500; ++i) next.insert(m.next_word(3, 7, i / 500.0));
  EXPECT_LE(next.size(), 6u);
  EXPECT_GE(next.size(), 2u);
  // The language is fixed (the default model is trained on it): golden first sentence.
  TaskRng g(1);
  EXPECT_EQ(m.sentence(g), "From closes queen good wants from short farmer so stone a over paints they cat.");
}

TEST(PromptFit, LargestFittingMatchesBruteForce) {
  std::mt19937 rng(3);
  for (int t = 0; t < 300; ++t) {
    int limit = static_cast<int>(rng() % 200) - 1;  // fits(k) iff k <= limit
    int estimate = static_cast<int>(rng() % 400);
    int calls = 0;
    int k = largest_fitting(estimate, [&](int x) { ++calls; return x <= limit; });
    EXPECT_EQ(k, limit) << "estimate " << estimate;
    EXPECT_LT(calls, 40);
  }
}

TEST(TrainText, NiahSampleWithAnswerSpans) {
  WordTokenizer tok;
  auto s = one(tok, NiahFamily::multiquery, 800, 0.5, 1, Split::train);
  auto st = train_text_from_sample(s);
  ASSERT_EQ(st.answer_spans.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(st.text.substr(st.answer_spans[i].first, st.answer_spans[i].second - st.answer_spans[i].first), s.answers[i].text);
  EXPECT_EQ(st.n_tokens, s.n_tokens());
  auto j = train_text_to_json(st);
  EXPECT_EQ(j["answer_spans"][0][0], st.answer_spans[0].first);
  EXPECT_EQ(j["text"], st.text);
}
