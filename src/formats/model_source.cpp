#include "formats/model_source.h"

#include <filesystem>
#include <fstream>

#include "formats/gguf.h"
#include "formats/safetensors.h"
#include "util/error.h"

namespace bosch {

SourceKind source_kind(const std::string& path) {
  namespace fs = std::filesystem;
  if (is_hf_model_dir(path)) return SourceKind::hf_dir;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return SourceKind::other;
  char magic[4] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(magic, 4);
  if (f.gcount() == 4 && std::string(magic, 4) == "GGUF") return SourceKind::gguf;
  const bool named_gguf = path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
  return named_gguf ? SourceKind::gguf : SourceKind::other;
}

ModelFile ModelFile::open(const std::string& path, FileHold hold) {
  std::error_code ec;
  check(std::filesystem::exists(path, ec),
        "'{}': no such file or directory (expected a .gguf file or a Hugging Face model directory)", path);
  ModelFile f;
  f.path = path;
  f.kind = source_kind(path);
  f.hold = hold;
  check(f.kind != SourceKind::other,
        "'{}' is neither a .gguf file nor a Hugging Face model directory (with config.json)", path);
  if (f.kind == SourceKind::gguf) f.gguf = std::make_shared<const GGUFFile>(path, hold);
  return f;
}

}  // namespace bosch
