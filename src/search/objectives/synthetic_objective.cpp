#include "search/objectives/synthetic_objective.h"

#include <fmt/format.h>

#include <memory>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "search/core/rng.h"
#include "util/checked.h"
#include "util/error.h"

namespace bosch::search {

SyntheticObjective::SyntheticObjective(int n_layers, int n_heads, std::vector<double> unary,
                                       std::vector<PairTerm> pairs)
    : n_layers_(n_layers), n_heads_(n_heads), unary_(std::move(unary)), pairs_(std::move(pairs)) {
  const int n = n_layers * n_heads;
  check(n_layers > 0 && n_heads > 0, "synthetic objective: need n_layers > 0 and n_heads > 0");
  check(static_cast<int>(unary_.size()) == n, "synthetic objective: {} unary costs for {} heads",
        unary_.size(), n);
  for (const auto& p : pairs_)
    check(p.a >= 0 && p.a < n && p.b >= 0 && p.b < n && p.a != p.b,
          "synthetic objective: pair ({}, {}) out of range", p.a, p.b);
}

MaskScore SyntheticObjective::evaluate(const HeadBits& swa) {
  if (fail_after_ == 0) throw std::runtime_error("synthetic objective: simulated kill");
  if (fail_after_ > 0) --fail_after_;
  calls_.push_back(swa);
  ++stats_.evaluations;
  return {value(swa), 0, 0, {}};
}

double SyntheticObjective::value(const HeadBits& swa) const {
  check(swa.size() == unary_.size(), "synthetic objective: mask of {} bits for {} heads",
        swa.size(), unary_.size());
  double s = 0;
  for (size_t i = 0; i < swa.size(); ++i)
    if (swa[i]) s -= unary_[i];
  for (const auto& p : pairs_)
    if (swa[p.a] && swa[p.b]) s -= p.cost;
  return s;
}

std::string SyntheticObjective::describe() const {
  uint64_t h = 0x5EED;
  auto mix = [&](double v) {
    uint64_t bits;
    static_assert(sizeof bits == sizeof v);
    std::memcpy(&bits, &v, sizeof v);
    h = splitmix64(h) ^ bits;
  };
  for (double u : unary_) mix(u);
  for (const auto& p : pairs_) mix(p.a * 1e6 + p.b), mix(p.cost);
  return fmt::format("synthetic {}x{} #{:016x}", n_layers_, n_heads_, splitmix64(h));
}

std::unique_ptr<Objective> make_synthetic_objective(const std::string& spec) {
  // Strict: decimal fields, nothing after them, sizes checked in 64 bits before any allocation.
  const std::string body = spec.starts_with("synthetic:") ? spec.substr(10) : spec;
  const std::string usage = fmt::format(
      "--objective {}: expected synthetic:LxH[:SEED] (L, H >= 1, L x H <= 65536, SEED < 2^64), e.g. "
      "synthetic:8x4:1",
      excerpt(spec, 60));
  const char *p = body.data(), *end = body.data() + body.size();
  uint64_t uL = 0, uH = 0, seed = 1;
  auto field = [&](uint64_t& v) {
    const auto r = std::from_chars(p, end, v);
    check(r.ec == std::errc() && r.ptr != p, "{}", usage);
    p = r.ptr;
  };
  field(uL);
  check(p < end && *p == 'x', "{}", usage);
  ++p;
  field(uH);
  if (p < end) {
    check(*p == ':', "{}", usage);
    ++p;
    field(seed);
  }
  check(p == end && uL >= 1 && uH >= 1 && uL <= (1u << 16) && uH <= (1u << 16) && uL * uH <= (1u << 16), "{}",
        usage);
  const int L = static_cast<int>(uL), H = static_cast<int>(uH);
  Rng rng(seed);
  auto u01 = [&] { return (rng.next() >> 11) * 0x1.0p-53; };
  std::vector<double> unary(L * H);
  std::vector<PairTerm> pairs;
  for (int l = 0; l < L; ++l) {
    const double layer_scale = 0.05 + 2.0 * u01() * u01();  // a few sensitive layers
    for (int h = 0; h < H; ++h) unary[l * H + h] = layer_scale * u01() * u01();
    for (int k = 0; k < H / 2; ++k) {  // redundant pairs: cheap alone, costly together
      int a = l * H + static_cast<int>(rng.below(H)), b = l * H + static_cast<int>(rng.below(H));
      if (a != b) pairs.push_back({a, b, layer_scale * 0.5 * u01()});
    }
  }
  return std::make_unique<SyntheticObjective>(L, H, std::move(unary), std::move(pairs));
}

}  // namespace bosch::search
