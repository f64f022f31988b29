// load_tokenizer(path): picks the loader from what the path is.
#include <filesystem>
#include <fstream>

#include "formats/gguf.h"
#include "formats/model_source.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace bosch {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::string tj = (fs::path(path) / "tokenizer.json").string();
    check(fs::exists(tj), "{}: directory has no tokenizer.json", path);
    return load_tokenizer_json(tj);
  }
  check(fs::exists(path, ec), "{}: no such file or directory (expected a .gguf file, a model "
                              "directory or a tokenizer.json)", path);
  if (source_kind(path) == SourceKind::gguf) {
    GGUFFile g(path);
    return load_tokenizer_from_gguf(g);
  }
  return load_tokenizer_json(path);
}

std::unique_ptr<Tokenizer> load_tokenizer(const ModelFile& file) {
  if (file.gguf) return load_tokenizer_from_gguf(*file.gguf);
  return load_tokenizer(file.path);  // a model directory: its tokenizer.json
}

}  // namespace bosch
