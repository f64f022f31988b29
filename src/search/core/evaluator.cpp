#include "search/core/evaluator.h"

#include <chrono>
#include <cmath>

#include "util/error.h"
#include "util/mpi_comm.h"
#include "util/progress.h"

namespace bosch::search {

int count_ones(const HeadBits& bits) {
  int n = 0;
  for (uint8_t b : bits) n += b != 0;
  return n;
}

std::vector<int> layer_counts(const HeadBits& bits, int n_heads) {
  std::vector<int> c(bits.size() / static_cast<size_t>(n_heads), 0);
  for (size_t i = 0; i < bits.size(); ++i) c[i / static_cast<size_t>(n_heads)] += bits[i] != 0;
  return c;
}

Evaluator::Evaluator(Objective& obj, EvaluatorOptions opt) : obj_(obj), opt_(std::move(opt)) {
  check(opt_.target_ratio >= 0 && opt_.target_ratio <= 1, "--ratio {}: expected a value in [0, 1]",
        opt_.target_ratio);
  check(std::isfinite(opt_.alpha) && opt_.alpha >= 0, "--alpha {}: expected a value >= 0",
        opt_.alpha);
  nlohmann::json header = opt_.config;
  header["objective"] = obj_.describe();
  header["n_layers"] = obj_.n_layers();
  header["n_heads"] = obj_.n_heads();
  const bool writer = mpi::rank() == 0;  // under MPI the other ranks take the same decisions silently
  if (opt_.resume) {
    check(!opt_.journal_path.empty(), "--resume needs a journal file");
    journal_ = Journal::resume(opt_.journal_path, header, n_bits(), replay_, writer);
  } else if (!opt_.journal_path.empty() && writer) {
    journal_ = Journal::create(opt_.journal_path, header);
  }
}

Evaluator::~Evaluator() = default;

double Evaluator::normalise(double raw) const { return (raw - s_allswa_) / denom_; }

double Evaluator::loss_of(const MaskScore& raw, const HeadBits& bits) const {
  const double ratio = bits.empty() ? 0.0 : double(count_ones(bits)) / bits.size();
  const double d = ratio - opt_.target_ratio;
  return -normalise(raw.value) + opt_.alpha * d * d;
}

void Evaluator::init_references() {
  const std::string saved = stage_;
  stage_ = "reference";
  HeadBits full(n_bits(), 0), swa(n_bits(), 1);
  // Raw scores only: normalisation needs both first.
  s_full_ = evaluate(full).raw.value;
  s_allswa_ = evaluate(swa).raw.value;
  const double d = s_full_ - s_allswa_;
  denom_ = std::abs(d) > 1e-12 ? d : 1.0;
  refs_ = true;
  stage_ = saved;
}

Evaluation Evaluator::evaluate(const HeadBits& bits) {
  check(bits.size() == n_bits(), "search: mask of {} bits for {} heads", bits.size(), n_bits());
  const std::string key(bits.begin(), bits.end());
  Evaluation ev;
  auto it = memo_.find(key);
  if (it != memo_.end()) {
    ++memo_hits_;
    ev.raw = it->second;
  } else {
    ev.fresh = true;
    if (replay_next_ < replay_.size()) {
      const JournalEntry& e = replay_[replay_next_];
      check(e.bits == bits,
            "journal {}: entry {} holds mask {} but the search now asks for {}; the journal was "
            "written by a different search (other seed, budgets or version) and cannot be resumed",
            opt_.journal_path, e.index, bits_to_string(e.bits), bits_to_string(bits));
      ev.raw = e.score;
      ++replay_next_;
      ++replayed_;
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      ev.raw = obj_.evaluate(bits);
      objective_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      check(std::isfinite(ev.raw.value), "search: the objective returned a non-finite score ({})",
            ev.raw.value);
      ++computed_;
      if (journal_.is_open()) journal_.append({fresh_, stage_, bits, ev.raw});
    }
    memo_.emplace(key, ev.raw);
    ++fresh_;
    if (progress_) progress_->add(1);
  }
  if (refs_) {
    ev.score = normalise(ev.raw.value);
    ev.loss = loss_of(ev.raw, bits);
  }
  return ev;
}

}  // namespace bosch::search
