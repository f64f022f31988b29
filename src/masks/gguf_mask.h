// The attention plan stored in a GGUF file's metadata, so a model file carries its mask.
// Version 2 (written): flat arrays only, because ggml's GGUF reader (llama.cpp, ollama, ...)
// refuses nested arrays and would not load the file at all:
//   bosch.swa.version        UINT32               2
//   bosch.swa.layer_count    UINT32               L (the mask's shape, checked against the model)
//   bosch.swa.kv_head_count  UINT32               H
//   bosch.swa.window         INT32[L]             W of the layer's SWA heads (0: the layer has none)
//   bosch.swa.sinks          INT32[L]             S of the layer's SWA heads
//   bosch.swa.head_swa       INT32[L * H]         1 = SWA, 0 = full; (layer l, KV head h) at l * H + h
//   bosch.swa.convention     STRING               the visibility rule, for readers of the file
// Version 1 (still read, with a note on stderr): window and sinks as above plus
//   bosch.swa.heads          ARRAY[L] of INT32[]  the SWA KV head indices of each layer.
// W and S follow bosch's rule: query i sees key j iff j <= i and (i - j < W or j < S).
#pragma once
#include <optional>
#include <string>

#include "formats/gguf.h"
#include "model/attention_plan.h"
#include "model/config.h"

namespace bosch {

// Copies `src_gguf` (metadata and tensor bytes unchanged) to `out_gguf` with the bosch.swa.*
// keys of `plan` added (replacing any already there). Error when the plan's shape differs from
// the file's (block_count, head_count_kv) or when SWA heads of one layer differ in (W, S).
void write_gguf_with_plan(const std::string& src_gguf, const AttentionPlan& plan,
                          const std::string& out_gguf);

// The plan stored in the file's metadata, or nullopt when it has no bosch.swa.* keys.
// Error (naming the file, the key and what was expected) when keys are missing, malformed,
// inconsistent with each other or do not fit `cfg`; unknown bosch.swa.* keys and the old
// version-1 form give a note on stderr.
std::optional<AttentionPlan> plan_from_gguf_metadata(const GGUFFile& f, const ModelConfig& cfg);

}  // namespace bosch
