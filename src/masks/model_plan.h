// The attention plan a command runs with: --mask (a mask file, "full" or "all-swa"), else the
// plan stored in a GGUF's bosch.swa.* metadata (a mask exported with export-mask --format gguf),
// else full attention.
#pragma once
#include <string>

#include "model/attention_plan.h"
#include "formats/model_source.h"
#include "model/model.h"

namespace bosch {

// `file`: the model's file opened once (formats/model_source.h); without it a GGUF source is
// opened again for its metadata.
AttentionPlan plan_for_model(const Model& m, const std::string& mask_arg, int window, int sinks,
                             std::string* description = nullptr, const ModelFile* file = nullptr);

}  // namespace bosch
