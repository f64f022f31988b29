// LongBench JSONL data files.
#include "fuzz_util.h"
#include "tasks/longbench_data.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("hotpotqa.jsonl", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] { longbench::read_dataset_file(path, 0); });
  return 0;
}
