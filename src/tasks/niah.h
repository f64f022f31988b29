// NIAH (needle in a haystack) sample generator, RULER-style, deterministic from a seed.
//
// Families (each its own named task):
//   single_noise   one needle, noise haystack, 7-digit number         (RULER niah_single_1)
//   single_text    one needle, text haystack, number                  (niah_single_2)
//   single_uuid    one needle, text haystack, UUID value              (niah_single_3)
//   multikey       the needle + 3 distractor needles with other keys  (niah_multikey_1)
//   multikey_uuid  like multikey with UUID keys and UUID values       (niah_multikey_3)
//   multivalue     4 needles with one key; all 4 values are answers   (niah_multivalue)
//   multiquery     4 needles with 4 keys; all 4 are asked             (niah_multiquery)
//   passkey        the classic pass key retrieval, noise haystack, 5-digit number
// The text haystack is the markov language unless --haystack gives a file (or "noise").
//
// Prompt = chat_prefix + intro "\n" context "\n" question + chat_suffix + answer_prefix, e.g.
//   "... What is the special magic number for calm-otter mentioned in the provided text?"
//   answer prefix "The special magic number for calm-otter mentioned in the provided text is:"
//   continuation " 8272917"  (several answers: " v1, v2, v3, v4"; multivalue in document
//   order, multiquery in the order the question names the keys). See tasks/task_sample.h.
// Length: prompt + continuation tokens <= the requested length, short of it by less than one
// haystack sentence (after the fit, a few later sentences are tried to fill the gap). Depth d: the (first) needle goes between haystack sentences at index
// round(d * k) of k; the other needles of multi-needle families at seeded random depths.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/haystack.h"
#include "tasks/prompt_fit.h"
#include "tasks/splits.h"
#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

enum class NiahFamily { single_noise, single_text, single_uuid, multikey, multikey_uuid, multivalue, multiquery, passkey };

const std::vector<NiahFamily>& all_niah_families();
const char* niah_family_name(NiahFamily f);
NiahFamily parse_niah_family(std::string_view name);  // Error lists the known names
// "niah" (all families) or "niah:single_noise,multikey,..."
std::vector<NiahFamily> parse_niah_suite(const std::string& suite);

// n evenly spaced depths in [0, 1] (n == 1: 0.5).
std::vector<double> depth_grid(int n);

struct NiahOptions {
  std::vector<NiahFamily> families = all_niah_families();
  std::vector<int> lengths = {1024};
  std::vector<double> depths = depth_grid(11);
  int samples = 1;  // per (family, length, depth)
  uint64_t seed = 0;
  Split split = Split::test;
  Haystack text_haystack = Haystack::markov();
  ChatWrap chat;
};

// Options from the flags every NIAH command takes (suite "niah" or "niah:FAMILY,..."; depths:
// how many evenly spaced; haystack as in Haystack::from_arg), so they are filled in one place.
NiahOptions niah_options(const std::string& suite, const std::vector<int>& lengths, int depths,
                         int samples, uint64_t seed, Split split, const std::string& haystack,
                         const ChatWrap& chat);

// The seed of one sample; distinct for every (seed, split, family, length, depth, index).
uint64_t niah_sample_seed(uint64_t seed, Split split, NiahFamily f, int length, double depth,
                          int index);

// One sample. Throws Error when `length` cannot hold even the prompt without haystack.
TaskSample make_niah_sample(const Tokenizer& tok, NiahFamily f, int length, double depth,
                            Split split, uint64_t sample_seed, const Haystack& text_haystack,
                            const ChatWrap& chat);

// Tokens of the prompt, needles and answer of family `f` without any haystack (the longest of
// a few samples): the least a length must hold.
size_t niah_prompt_tokens(const Tokenizer& tok, NiahFamily f, Split split, uint64_t seed,
                          const ChatWrap& chat);
// The default length when the user gives none: the shortest power of two (from 256) that holds
// every family's prompt plus `room` haystack tokens, at most `max_length`; Error otherwise.
int niah_auto_length(const Tokenizer& tok, const std::vector<NiahFamily>& families, Split split,
                     const ChatWrap& chat, int room, int max_length);

// Every (family, length, depth, index) cell, in that nesting order, with progress on stderr.
std::vector<TaskSample> generate_niah(const Tokenizer& tok, const NiahOptions& opt);

}  // namespace bosch
