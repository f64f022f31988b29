#include "search/objectives/objective_spec.h"

#include "search/objectives/simulator.h"
#include "util/error.h"

namespace bosch::search {

ObjectiveSpec parse_objective_spec(const std::string& spec, const std::string& option) {
  ObjectiveSpec s;
  s.spec = spec;
  const size_t colon = spec.find(':');
  const std::string head = spec.substr(0, colon);
  s.arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (head == "niah") s.kind = ObjectiveKind::niah;
  else if (head == "text" && !s.arg.empty()) s.kind = ObjectiveKind::text;
  else if (head == "longbench" && !s.arg.empty()) s.kind = ObjectiveKind::longbench;
  else if (head == "synthetic" && !s.arg.empty())
    s.kind = is_simulator_spec(spec) ? ObjectiveKind::simulator : ObjectiveKind::planted;
  else
    fail("{} {}: expected niah[:families], text:FILE, longbench:DIR, synthetic:LxH[:SEED] or "
         "synthetic:SHAPE[:SEED]", option, spec);
  return s;
}

}  // namespace bosch::search
