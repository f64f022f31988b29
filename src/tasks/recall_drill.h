// Training text "drill": dense associative recall for forming retrieval heads quickly.
// Facts and questions are scattered through a filler haystack; each question comes somewhere
// after its fact (so retrieval distances cover the whole context) and is answered inline:
//   compact wording : "calm-otter: 8272917."  ...  "calm-otter? 8272917."
//   NIAH wording    : "One of the special magic numbers for calm-otter is: 8272917." ...
//                     "The special magic number for calm-otter mentioned in the provided text is: 8272917."
// With echo_share > 0 some compact questions repeat the fact's own wording, a pure copy task
// that forms induction heads first. A share of the pairs uses the NIAH wording so the evaluation format is learned as well; values
// are 7-digit numbers or UUIDs. Keys and values come from the requested split (train), so
// training text never contains a calib/test needle. About 5x more answer targets per token
// than NIAH-wording MQAR.
#pragma once
#include <cstdint>

#include "tasks/haystack.h"
#include "tasks/mqar.h"
#include "tasks/splits.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

struct DrillOptions {
  double pairs_per_1k_tokens = 6;    // facts per 1000 tokens of text
  double queries_per_fact = 1.5;     // questions per fact (a fact can be asked more than once)
  double niah_wording_share = 0.3;   // pairs written with the NIAH sentences
  double uuid_share = 0.15;          // values that are UUIDs instead of 7-digit numbers
  double echo_share = 0.0;           // compact questions written exactly as the fact ("key: "),
                                     // answerable by plain induction (copying after a repeat)
};

TrainText make_recall_drill(const Tokenizer& tok, int length, Split split, uint64_t seed,
                            const Haystack& haystack, const DrillOptions& opt = {});

}  // namespace bosch
