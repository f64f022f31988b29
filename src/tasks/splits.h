// Data splits. Disjointness is structural: every key and every value belongs to exactly one
// split, decided by a hash of its text (split_of), and generators only draw keys and values of
// the requested split. So no (key, value, depth, seed) of one split can appear in another, and
// training text never contains a calibration or test needle.
#pragma once
#include <string>
#include <string_view>

#include "tasks/task_rng.h"

namespace bosch {

enum class Split { train = 0, calib = 1, test = 2 };

Split parse_split(std::string_view name);  // "train" | "calib" | "test"; Error otherwise
const char* split_name(Split s);
// The split a key or value string belongs to.
Split split_of(std::string_view key_or_value);

// Draws of the given split (rejection sampling on split_of; ~3 tries on average).
std::string draw_word_key(Split s, TaskRng& rng);          // "adjective-noun"
std::string draw_number(Split s, TaskRng& rng, int digits);  // no leading zero
std::string draw_uuid(Split s, TaskRng& rng);              // 8-4-4-4-12 lowercase hex, v4 form

}  // namespace bosch
