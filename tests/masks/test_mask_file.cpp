// Mask file: round trip, refusal of another model's shape, field errors, --mask arguments.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "masks/mask_file.h"
#include "model/model.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "../test_support.h"

using bosch::tests::error_of;

using namespace bosch;

namespace {

const std::string kModel = bosch::tests::stories_model();
std::string tmp(const std::string& name) { return std::string(BOSCH_BINARY_DIR) + "/" + name; }

MaskModelInfo info() { return {"llama", 5, 8, 4, 8, "abc123"}; }

AttentionPlan some_plan() {
  AttentionPlan p(5, 4);
  p.set_swa(0, 1, 64, 4);
  p.set_swa(3, 0, 64, 4);
  p.set_swa(4, 3, 64, 4);
  return p;
}

}  // namespace

TEST(MaskFile, RoundTrip) {
  auto plan = some_plan();
  MaskFile m = MaskFile::from_plan(plan, info(), 0.25, {{"search", "bosch"}, {"budget", 100}});
  EXPECT_EQ(m.window, 64);
  EXPECT_EQ(m.sinks, 4);
  EXPECT_DOUBLE_EQ(m.swa_ratio(), 3.0 / 20);
  std::string path = tmp("mask_roundtrip.json");
  m.save(path);
  MaskFile r = MaskFile::load(path);
  EXPECT_EQ(r.version, MaskFile::kVersion);
  EXPECT_EQ(r.model.identity, "abc123");
  EXPECT_EQ(r.model.arch, "llama");
  EXPECT_EQ(r.swa, m.swa);
  EXPECT_DOUBLE_EQ(r.target_ratio, 0.25);
  EXPECT_EQ(r.provenance["budget"], 100);
  EXPECT_EQ(r.to_plan(), plan);
  auto j = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(j["format"], "bosch-mask");
  EXPECT_EQ(j["swa"][0], (std::vector<int>{0, 1, 0, 0}));
  std::remove(path.c_str());
}

TEST(MaskFile, RefusesAnotherShapeNamingBoth) {
  MaskFile m = MaskFile::from_plan(some_plan(), info(), 0.25);
  MaskModelInfo other{"qwen2", 24, 14, 2, 64, "zzz"};
  std::string e = error_of([&] { m.check_fits(other, "m.json"); });
  EXPECT_NE(e.find("m.json"), std::string::npos) << e;
  EXPECT_NE(e.find("5 layers x 4 KV heads"), std::string::npos) << e;
  EXPECT_NE(e.find("24 layers x 2 KV heads"), std::string::npos) << e;
  MaskModelInfo same_shape = info();
  same_shape.identity = "other";
  e = error_of([&] { m.check_fits(same_shape, "m.json"); });
  EXPECT_NE(e.find("identity"), std::string::npos) << e;
  EXPECT_NO_THROW(m.check_fits(same_shape, "m.json", /*require_same_weights=*/false));
  EXPECT_NO_THROW(m.check_fits(info(), "m.json"));
}

TEST(MaskFile, MalformedFieldsAreNamed) {
  auto good = MaskFile::from_plan(some_plan(), info(), 0.25).to_json();
  struct Case { std::function<void(nlohmann::json&)> edit; std::string expect; };
  std::vector<Case> cases = {
      {[](auto& j) { j.erase("window"); }, "'window'"},
      {[](auto& j) { j["model"].erase("n_kv_heads"); }, "'model.n_kv_heads'"},
      {[](auto& j) { j["swa"].erase(0); }, "'swa'"},
      {[](auto& j) { j["swa"][2] = {0, 1}; }, "'swa[2]'"},
      {[](auto& j) { j["swa"][1][3] = 2; }, "'swa[1][3]'"},
      {[](auto& j) { j["version"] = 99; }, "version 99"},
      {[](auto& j) { j["target_ratio"] = "half"; }, "'target_ratio'"},
      {[](auto& j) { j["window"] = 0; }, "'window'"},
  };
  for (auto& c : cases) {
    auto j = good;
    c.edit(j);
    std::string e = error_of([&] { MaskFile::from_json(j, "bad.json"); });
    EXPECT_NE(e.find(c.expect), std::string::npos) << "expected " << c.expect << " in: " << e;
    EXPECT_NE(e.find("bad.json"), std::string::npos) << e;
  }
  std::string path = tmp("mask_bad.json");
  write_file_atomic(path, "{not json");
  EXPECT_NE(error_of([&] { MaskFile::load(path); }).find("not valid JSON"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(error_of([&] { MaskFile::load(tmp("no_such_mask.json")); }).find("no_such_mask.json"), std::string::npos);
  // A plan mixing windows cannot be one mask file.
  auto mixed = some_plan();
  mixed.set_swa(1, 1, 32, 4);
  EXPECT_NE(error_of([&] { MaskFile::from_plan(mixed, info(), 0); }).find("one window"), std::string::npos);
}

// Issue #24: numbers out of any range, deep nesting in free-form fields, long values in messages.
TEST(MaskFile, HostileValuesAreClearErrors) {
  const std::string data = std::string(BOSCH_SOURCE_DIR) + "/tests/data/malformed/";
  std::string e = error_of([&] { MaskFile::load(data + "mask_window_1e400.json"); });
  EXPECT_NE(e.find("mask_window_1e400.json': not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("1e400"), std::string::npos) << e;
  e = error_of([&] { MaskFile::load(data + "mask_window_2pow31.json"); });
  EXPECT_NE(e.find("field 'window' must be an integer in [0, 2147483647], got 2147483648"), std::string::npos) << e;
  auto good = MaskFile::from_plan(some_plan(), info(), 0.25).to_json();
  for (const char* key : {"format", "provenance"}) {  // deep nesting: an error, not a stack overflow
    std::string text = good.dump();
    const std::string deep = std::string(40000, '[') + std::string(40000, ']');
    text.insert(1, fmt::format("\"{}\": {}, ", key, deep));
    const std::string path = tmp("mask_deep.json");
    write_file_atomic(path, text);
    e = error_of([&] { MaskFile::load(path); });
    EXPECT_NE(e.find("mask_deep.json': JSON nested deeper than 64 levels"), std::string::npos) << e;
    std::remove(path.c_str());
  }
  auto j = good;
  j["format"] = std::string(100000, 'f');
  e = error_of([&] { MaskFile::from_json(j, "long.json"); });
  EXPECT_NE(e.find("field 'format'"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u) << "the value is excerpted: " << e.substr(0, 300);
  j = good;
  j["sinks"] = 4.5;
  EXPECT_NE(error_of([&] { MaskFile::from_json(j, "f.json"); }).find("'sinks' must be an integer in [0, 2147483647], got 4.5"),
            std::string::npos);
}

TEST(MaskFile, MaskArgumentsWithRealModel) {
  auto m = Model::load(kModel);
  std::string desc;
  EXPECT_EQ(plan_from_mask_arg("full", *m, 0, 0, &desc), m->full_plan());
  EXPECT_EQ(desc, "full");
  auto swa = plan_from_mask_arg("all-swa", *m, 32, 4, &desc);
  EXPECT_EQ(swa.count_swa(), 20);
  EXPECT_EQ(swa.window(2, 1), 32);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("all-swa", *m, 0, 4); }).find("--window"), std::string::npos);
  // heads:L.H,... and layers:L,...: exactly those heads SWA(W, S), the rest full.
  auto hp = plan_from_mask_arg("heads:2.1,4.3", *m, 16, 2, &desc);
  EXPECT_EQ(hp.count_swa(), 2);
  EXPECT_EQ(hp.window(2, 1), 16);
  EXPECT_EQ(hp.sinks(4, 3), 2);
  EXPECT_EQ(hp.window(2, 0), 0);
  auto lp = plan_from_mask_arg("layers:0,3", *m, 16, 2);
  EXPECT_EQ(lp.count_swa(), 8);
  for (int h = 0; h < 4; ++h) EXPECT_EQ(lp.window(3, h), 16);
  EXPECT_EQ(lp.window(1, 0), 0);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("heads:5.0", *m, 16, 2); }).find("outside the model's 5 layers x 4"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("layers:1,1", *m, 16, 2); }).find("listed twice"), std::string::npos);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("layers:x", *m, 16, 2); }).find("not a layer index"), std::string::npos);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("layers:99999999999", *m, 16, 2); }).find("not a layer index"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("heads:0.99999999999", *m, 16, 2); }).find("not LAYER.HEAD"),
            std::string::npos);
  EXPECT_NE(error_of([&] { plan_from_mask_arg("heads:0.0", *m, 0, 2); }).find("--window"), std::string::npos);
  // A file made for this model loads; one for another shape is refused with both shapes.
  std::string path = tmp("mask_real.json");
  MaskFile::from_plan(some_plan(), mask_model_info(*m), 0.15).save(path);
  EXPECT_EQ(plan_from_mask_arg(path, *m, 0, 0), some_plan());
  auto other = mask_model_info(*m);
  other.n_layers = 6;
  AttentionPlan p6(6, 4);
  MaskFile::from_plan(p6, other, 0).save(path);
  std::string e = error_of([&] { plan_from_mask_arg(path, *m, 0, 0); });
  EXPECT_NE(e.find("6 layers x 4 KV heads"), std::string::npos) << e;
  EXPECT_NE(e.find("5 layers x 4 KV heads"), std::string::npos) << e;
  std::remove(path.c_str());
}
