// What a model path names, decided in one place (the model loader, the tokenizer loader and
// the mask-in-metadata reader all ask here): by content, not by name.
#pragma once
#include <string>

namespace bosch {

enum class SourceKind {
  hf_dir,  // a directory holding config.json (a Hugging Face model)
  gguf,    // a file that starts with the GGUF magic, or is named *.gguf (the GGUF reader then
           // names what is wrong with it)
  other,   // anything else: missing, another file (e.g. a tokenizer.json), a directory without config.json
};

SourceKind source_kind(const std::string& path);

}  // namespace bosch
