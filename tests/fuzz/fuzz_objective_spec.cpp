// The --objective spec (issue #40: `synthetic:LxH` read by sscanf overflowed, wrapped and accepted
// junk): parse_objective_spec on any text, then the planted objective it names is built (L x H is
// bounded at 65536 heads, so a build is cheap) and the simulator's shape name looked up.
#include "fuzz_util.h"
#include "search/objectives/objective_spec.h"
#include "search/objectives/simulator.h"
#include "search/objectives/synthetic_objective.h"

using namespace bosch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string spec(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const search::ObjectiveSpec s = search::parse_objective_spec(spec);
    if (s.kind == search::ObjectiveKind::planted) {
      const auto obj = search::make_synthetic_objective(spec);
      if (obj->n_layers() < 1 || obj->n_heads() < 1 ||
          static_cast<int64_t>(obj->n_layers()) * obj->n_heads() > 65536) {
        std::fprintf(stderr, "fuzz: %s built %d x %d heads\n", spec.c_str(), obj->n_layers(), obj->n_heads());
        std::abort();
      }
    }
  });
  return 0;
}
