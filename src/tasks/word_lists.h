// Built-in word lists: needle keys are "adjective-noun" pairs (as in RULER), the markov filler
// language uses its own vocabulary (no overlap with keys, so the haystack never names a key),
// and the noise haystack is RULER's repeated sentences.
#pragma once
#include <string_view>
#include <vector>

namespace bosch {

const std::vector<std::string_view>& key_adjectives();
const std::vector<std::string_view>& key_nouns();
const std::vector<std::string_view>& markov_vocabulary();
// "The grass is green.", "The sky is blue.", ... repeated in order to make the noise haystack.
const std::vector<std::string_view>& noise_sentences();

}  // namespace bosch
