// Mask files (bosch-mask JSON): load, convert to a plan, write back.
#include "fuzz_util.h"
#include "masks/mask_file.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("mask.json", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] {
    MaskFile m = MaskFile::load(path);
    m.to_plan().summary();
    m.to_json().dump();
  });
  return 0;
}
