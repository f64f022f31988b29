// A model's identity: written into mask files and journals so a mask is not applied to another
// model. Must not change for an existing model (tests and stored masks check it).
#pragma once
#include <string>

#include "model/config.h"
#include "model/weights.h"

namespace bosch {

// 16 hex digits: FNV-1a over the config's dimensions and architecture and a strided sample of
// every linear weight, each sampled element as float32 (one identity whatever the stored type).
std::string model_identity(const ModelConfig& c, const ModelMatrices& mats);

}  // namespace bosch
