#include "masks/model_plan.h"

#include "formats/gguf.h"
#include "formats/model_source.h"
#include "masks/gguf_mask.h"
#include "masks/mask_file.h"

namespace bosch {

AttentionPlan plan_for_model(const Model& m, const std::string& mask_arg, int window, int sinks,
                             std::string* description, const ModelFile* file) {
  if (!mask_arg.empty()) return plan_from_mask_arg(mask_arg, m, window, sinks, description);
  const std::string& src = m.source();
  std::shared_ptr<const GGUFFile> gguf = file ? file->gguf : nullptr;
  if (!file && source_kind(src) == SourceKind::gguf) gguf = std::make_shared<const GGUFFile>(src);
  if (gguf) {
    if (auto plan = plan_from_gguf_metadata(*gguf, m.config())) {
      if (description) *description = "mask from " + src + " metadata: " + plan->summary();
      return *plan;
    }
  }
  if (description) *description = "full attention";
  return m.full_plan();
}

}  // namespace bosch
