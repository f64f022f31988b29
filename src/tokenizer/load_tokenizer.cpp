// load_tokenizer(path): picks the loader from what the path is.
#include <filesystem>
#include <fstream>

#include "formats/gguf.h"
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
  char magic[4] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(magic, 4);
  if (f.gcount() == 4 && std::string(magic, 4) == "GGUF") {
    GGUFFile g(path);
    return load_tokenizer_from_gguf(g);
  }
  return load_tokenizer_json(path);
}

}  // namespace bosch
