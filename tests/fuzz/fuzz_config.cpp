// Hugging Face config.json: written next to the qwen3_tiny fixture's weights, then Model::load
// (so a config that matches the weights loads the whole model).
#include <filesystem>

#include "fuzz_util.h"
#include "model/model.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    auto d = fuzz::scratch_dir() / "hf";
    std::filesystem::create_directories(d);
    std::filesystem::copy_file(BOSCH_SOURCE_DIR "/tests/data/qwen3_tiny/model.safetensors",
                               d / "model.safetensors",
                               std::filesystem::copy_options::overwrite_existing);
    return d.string();
  }();
  fuzz::write_scratch("hf/config.json", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] { Model::load(dir)->config().validate("fuzz"); });
  return 0;
}
