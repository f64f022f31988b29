// What a model path names, decided in one place, and the file opened once: the model loader,
// the tokenizer loader and the mask-in-metadata reader all take the same ModelFile.
#pragma once
#include <memory>
#include <string>

#include "util/file_bytes.h"

namespace bosch {

class GGUFFile;

enum class SourceKind {
  hf_dir,  // a directory holding config.json (a Hugging Face model)
  gguf,    // a file that starts with the GGUF magic, or is named *.gguf (the GGUF reader then
           // names what is wrong with it)
  other,   // anything else: missing, another file (e.g. a tokenizer.json), a directory without config.json
};

// By content, not by name.
SourceKind source_kind(const std::string& path);

// A model path opened once. For GGUF the parsed file (metadata and mapped bytes); a caller drops
// it once model, tokenizer and plan are read, so the vocabulary's metadata arrays are freed
// (the model keeps only the mapped bytes).
struct ModelFile {
  std::string path;
  SourceKind kind = SourceKind::other;
  FileHold hold = FileHold::Map;         // how weight files are kept (a GGUF's already is)
  std::shared_ptr<const GGUFFile> gguf;  // set when kind == gguf
  // hold: how a GGUF's bytes are kept (util/file_bytes.h). Error when the path is neither a
  // GGUF file nor a Hugging Face model directory.
  static ModelFile open(const std::string& path, FileHold hold);
};

}  // namespace bosch
