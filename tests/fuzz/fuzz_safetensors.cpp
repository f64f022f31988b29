// safetensors: header JSON, dtypes, shapes and data offsets.
#include "formats/safetensors.h"
#include "fuzz_util.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("in.safetensors", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] {
    SafetensorsFile f(path);
    for (const auto& t : f.tensors()) (void)t.numel();
  });
  return 0;
}
