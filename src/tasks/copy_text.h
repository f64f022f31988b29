// Training text "copy": random strings that come back later in the same text, between filler
// sentences:  "... k3j9xq0a The old man ... k3j9xq0a ..."
// Every character of a repeat after its first is predictable only by copying from the earlier
// occurrence (an induction head), and about a third of all tokens are such characters, ten
// times the density of the recall drill. It is the first phase of the default model's
// curriculum: induction forms here, then the recall drill and NIAH text teach key matching
// and the evaluation wording. Strings are drawn from the requested split (see splits.h).
#pragma once
#include <cstdint>

#include "tasks/haystack.h"
#include "tasks/mqar.h"
#include "tasks/splits.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

struct CopyOptions {
  int min_chars = 6, max_chars = 20;  // length of a random string (lowercase letters and digits)
  double filler_share = 0.1;          // share of events that are a filler sentence
  double repeat_share = 0.6;          // share of the other events that repeat an earlier string
};

TrainText make_copy_text(const Tokenizer& tok, int length, Split split, uint64_t seed,
                         const Haystack& haystack, const CopyOptions& opt = {});

}  // namespace bosch
