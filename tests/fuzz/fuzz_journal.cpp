// The search journal: resume against a fixed configuration and a 20-bit mask (the seeds in
// tests/fuzz/seeds/journal are written with this configuration).
#include "fuzz_util.h"
#include "search/core/journal.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("journal.jsonl", {reinterpret_cast<const char*>(data), size});
  static const nlohmann::json config = {{"objective", "fuzz"}, {"ratio", 0.5}, {"seed", 0}};
  fuzz::expect_clean([&] {
    std::vector<search::JournalEntry> entries;
    search::Journal::resume(path, config, 20, entries);
  });
  return 0;
}
