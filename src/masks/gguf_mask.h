// The attention plan stored in a GGUF file's metadata, so a model file carries its mask:
//   bosch.swa.version  UINT32            1
//   bosch.swa.window   INT32[n_layers]   W of the layer's SWA heads (0: the layer has none)
//   bosch.swa.sinks    INT32[n_layers]   S of the layer's SWA heads
//   bosch.swa.heads    ARRAY[n_layers] of INT32[]: the SWA KV head indices of each layer
//   bosch.swa.convention STRING          the visibility rule, for readers of the file
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
// Error (naming the file and key) when the keys are malformed or do not fit `cfg`.
std::optional<AttentionPlan> plan_from_gguf_metadata(const GGUFFile& f, const ModelConfig& cfg);

}  // namespace bosch
