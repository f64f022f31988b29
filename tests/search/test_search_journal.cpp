// Evaluator memo, journal and resume: a killed search resumed from its journal ends with the
// same mask as an uninterrupted run, and no mask is ever evaluated twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "search/stages/bosch_search.h"
#include "search/objectives/synthetic_objective.h"
#include "util/atomic_file.h"
#include "util/error.h"

using namespace bosch::search;
namespace fs = std::filesystem;

namespace {

const char* kSpec = "synthetic:5x6:11";

SearchOptions search_options(uint64_t seed = 3) {
  SearchOptions o;
  o.ratio = 0.55;
  o.budget_probe = 8;  // < C(6, 4) = 15: local search
  o.budget_group = 20;
  o.seed = seed;
  return o;
}

EvaluatorOptions eval_options(const std::string& journal, bool resume, const SearchOptions& s) {
  EvaluatorOptions e;
  e.target_ratio = s.ratio;
  e.journal_path = journal;
  e.resume = resume;
  e.config = s.to_json();
  return e;
}

// Journals are fsync'd per line; on tmpfs (/dev/shm) that costs nothing, keeping the test fast.
std::string temp_path(const std::string& name) {
  const fs::path dir = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
  return (dir / fmt::format("bosch_{}_{}", ::getpid(), name)).string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct SearchRun {
  SearchResult result;
  int64_t computed = 0;
};

SearchRun run_search(const std::string& journal, bool resume, const SearchOptions& s,
               int64_t fail_after = -1) {
  auto obj = make_synthetic_objective(kSpec);
  static_cast<SyntheticObjective&>(*obj).fail_after(fail_after);
  Evaluator ev(*obj, eval_options(journal, resume, s));
  SearchRun r;
  r.result = run_bosch_search(ev, s);
  r.computed = static_cast<int64_t>(static_cast<SyntheticObjective&>(*obj).calls().size());
  return r;
}

}  // namespace

TEST(Journal, BitsRoundTripAndErrors) {
  HeadBits b = {1, 0, 0, 1, 1};
  EXPECT_EQ(bits_to_string(b), "10011");
  EXPECT_EQ(bits_from_string("10011", 5, "x"), b);
  EXPECT_THROW(bits_from_string("1001", 5, "x"), bosch::Error);
  EXPECT_THROW(bits_from_string("10021", 5, "x"), bosch::Error);
}

TEST(Evaluator, MemoNeverEvaluatesAMaskTwice) {
  auto obj = make_synthetic_objective("synthetic:6x4:2");
  auto& syn = static_cast<SyntheticObjective&>(*obj);
  SearchOptions s = search_options();
  s.budget_group = 60;  // small groups: the LNS revisits masks often
  Evaluator ev(*obj, eval_options("", false, s));
  SearchResult r = run_bosch_search(ev, s);
  std::set<HeadBits> distinct(syn.calls().begin(), syn.calls().end());
  EXPECT_EQ(distinct.size(), syn.calls().size());
  EXPECT_EQ(r.evaluations, static_cast<int64_t>(syn.calls().size()));
  EXPECT_GT(r.memo_hits, 0) << "the test must exercise the memo";
}

TEST(Evaluator, NormalisesBetweenAllSwaAndFull) {
  SyntheticObjective obj(1, 2, {1.0, 3.0});
  EvaluatorOptions o;
  o.target_ratio = 0.5;
  o.alpha = 2.0;
  Evaluator ev(obj, o);
  ev.init_references();
  EXPECT_DOUBLE_EQ(ev.s_full(), 0.0);
  EXPECT_DOUBLE_EQ(ev.s_allswa(), -4.0);
  Evaluation e = ev.evaluate({1, 0});  // S = -1 -> S^ = 0.75, ratio 0.5: no penalty
  EXPECT_DOUBLE_EQ(e.score, 0.75);
  EXPECT_DOUBLE_EQ(e.loss, -0.75);
  Evaluation f = ev.evaluate({0, 0});  // S^ = 1, penalty 2 * 0.25
  EXPECT_DOUBLE_EQ(f.loss, -1.0 + 0.5);
  EXPECT_FALSE(f.fresh);  // the full model was a reference evaluation
}

TEST(Resume, KilledSearchResumesToTheSameMask) {
  const SearchOptions s = search_options();
  const std::string ref_path = temp_path("ref.jsonl");
  SearchRun ref = run_search(ref_path, false, s);
  const std::string ref_text = bosch::read_file(ref_path);
  const auto ref_lines = lines_of(ref_text);
  ASSERT_EQ(static_cast<int64_t>(ref_lines.size()), 1 + ref.result.evaluations);
  ASSERT_GT(ref.result.evaluations, 40);
  ASSERT_GT(ref.result.polish.evaluations, 4) << "the kill points must reach into the polish";
  const int64_t in_polish = ref.result.evaluations - ref.result.polish.evaluations / 2;

  const std::string path = temp_path("killed.jsonl");
  for (int64_t kill_at : {int64_t(0), int64_t(1), int64_t(2), int64_t(7), ref.result.evaluations / 2,
                          in_polish, ref.result.evaluations - 1}) {
    // Kill: the objective throws after kill_at evaluations.
    EXPECT_THROW(run_search(path, false, s, kill_at), std::runtime_error);
    const std::string killed = bosch::read_file(path);
    ASSERT_EQ(lines_of(killed).size(), static_cast<size_t>(1 + kill_at));
    // Also cut the journal mid-line (a kill while writing), when there is a line to cut.
    for (bool partial : {false, true}) {
      std::string text = killed;
      if (partial && kill_at > 0) text = text.substr(0, text.size() - 9);
      bosch::write_file_atomic(path, text);
      SearchRun res = run_search(path, true, s);
      EXPECT_EQ(res.result.bits, ref.result.bits) << "kill at " << kill_at;
      EXPECT_EQ(res.result.evaluations, ref.result.evaluations);
      const int64_t kept = kill_at - (partial && kill_at > 0 ? 1 : 0);
      EXPECT_EQ(res.result.replayed, kept);
      EXPECT_EQ(res.computed, ref.result.evaluations - kept) << "replayed masks are not recomputed";
      EXPECT_EQ(bosch::read_file(path), ref_text) << "the resumed journal equals the uninterrupted one";
    }
  }
  fs::remove(ref_path);
  fs::remove(path);
}

TEST(Resume, CompleteJournalReplaysWithoutEvaluating) {
  const SearchOptions s = search_options();
  const std::string path = temp_path("done.jsonl");
  SearchRun ref = run_search(path, false, s);
  SearchRun again = run_search(path, true, s);
  EXPECT_EQ(again.result.bits, ref.result.bits);
  EXPECT_EQ(again.computed, 0);
  fs::remove(path);
}

TEST(Resume, RefusesAJournalOfAnotherSearch) {
  const std::string path = temp_path("other.jsonl");
  run_search(path, false, search_options(3));
  try {
    run_search(path, true, search_options(4));
    FAIL() << "resumed a journal written with another seed";
  } catch (const bosch::Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
  }
  // Same header but a corrupted entry: its checksum no longer matches.
  auto lines = lines_of(bosch::read_file(path));
  std::string text;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string l = lines[i];
    if (i == 5) {
      auto p = l.find("\"mask\":\"") + 8;
      l[p] = l[p] == '0' ? '1' : '0';
    }
    text += l + "\n";
  }
  bosch::write_file_atomic(path, text);
  EXPECT_THROW(run_search(path, true, search_options(3)), bosch::Error);
  // Garbage in the middle: an Error naming the line.
  bosch::write_file_atomic(path, lines[0] + "\n{not json\n" + lines[1] + "\n");
  try {
    run_search(path, true, search_options(3));
    FAIL();
  } catch (const bosch::Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_search(temp_path("missing.jsonl"), true, search_options(3)), bosch::Error);
  fs::remove(path);
}

// Issue #24: every line carries a checksum, so a changed score that does not change the search's
// path (it would have been replayed silently) is an Error naming the file and the line.
TEST(Resume, TamperedLineIsRefusedByItsChecksum) {
  const std::string path = temp_path("tamper.jsonl");
  run_search(path, false, search_options(3));
  const auto lines = lines_of(bosch::read_file(path));
  ASSERT_GT(lines.size(), 6u);
  EXPECT_NE(lines[3].find(",\"sum\":\""), std::string::npos) << lines[3];
  auto rewrite = [&](size_t at, const std::string& line) {
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) text += (i == at ? line : lines[i]) + "\n";
    bosch::write_file_atomic(path, text);
  };
  auto resume_error = [&] {
    try {
      run_search(path, true, search_options(3));
    } catch (const bosch::Error& e) {
      return std::string(e.what());
    }
    return std::string("(resumed)");
  };
  // A different "exact" rate: the search would take the same path with a wrong score.
  std::string l = lines[4];
  const auto p = l.find("\"exact\":") + 8;
  l.insert(p, "1");
  rewrite(4, l);
  std::string e = resume_error();
  EXPECT_NE(e.find("journal " + path + " line 5: checksum mismatch"), std::string::npos) << e;
  // A line without its checksum (cut, or written by an older bosch).
  l = lines[2].substr(0, lines[2].find(",\"sum\":")) + "}";
  rewrite(2, l);
  e = resume_error();
  EXPECT_NE(e.find("line 3: no checksum"), std::string::npos) << e;
  // A version-1 journal (no checksums) is refused with a clear message.
  rewrite(0, R"({"bosch_journal":1,"config":{}})");
  e = resume_error();
  EXPECT_NE(e.find("line 1: journal version 1"), std::string::npos) << e;
  // Deep nesting in the header config: an error, not a stack overflow.
  rewrite(0, R"({"bosch_journal":2,"config":)" + std::string(50000, '[') + std::string(50000, ']') + "}");
  e = resume_error();
  EXPECT_NE(e.find("line 1: JSON nested deeper than 64 levels"), std::string::npos) << e;
  rewrite(999, "");  // untouched journal: resumes
  EXPECT_EQ(resume_error(), "(resumed)");
  fs::remove(path);
}
