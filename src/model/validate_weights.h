// Every weight's shape against the config, before a Model uses it.
#pragma once
#include <string>

#include "model/config.h"
#include "model/weights.h"

namespace bosch {

// Error naming `source`, the tensor, its shape and the expected one, unless `small` (norms,
// biases) and `mats` (linear weights) have the shapes `c` implies.
void validate_weights(const ModelConfig& c, const ModelWeights& small, const ModelMatrices& mats,
                      const std::string& source);
// F32 views of float32 weights (random models, tests), after checking their sizes.
ModelMatrices f32_matrices(const ModelConfig& c, const ModelWeights& w, const std::string& source);

}  // namespace bosch
