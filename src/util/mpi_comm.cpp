#include "util/mpi_comm.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "util/error.h"

#ifdef BOSCH_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace bosch::mpi {

namespace {
int g_rank = 0, g_size = 1;
bool g_started = false;
int g_error_fd = 2;

#ifdef BOSCH_WITH_MPI
// Started by a launcher: Open MPI's mpirun, PMIx/PMI (srun, MPICH's hydra), or forced.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "BOSCH_MPI"})
    if (std::getenv(v)) return true;
  return false;
}

// The launcher ends the survivors with SIGTERM when a rank dies: say so on rank 0 instead of
// vanishing (async-signal-safe: write + _exit only).
extern "C" void on_sigterm(int) {
  static const char msg[] =
      "bosch: error: MPI rank 0 stopped by the launcher (SIGTERM): another rank died or the job was "
      "cancelled (see the launcher's message); a search's journal holds every finished evaluation: rerun "
      "it with --resume (any number of ranks)\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  _exit(143);
}

// Waits for every request, polling (MPI progresses nonblocking requests only inside MPI calls)
// with short sleeps so waiting ranks leave the cores to the ranks still computing.
// Ranks other than 0 wait twice as long, so that rank 0, which can name the missing rank,
// reports first.
void wait_all(std::vector<MPI_Request>& reqs, const std::vector<int>& peers, const char* what) {
  const double limit = timeout_seconds() * (g_rank == 0 ? 1 : 2);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  std::vector<bool> done(reqs.size(), false);
  size_t left = reqs.size();
  std::vector<int> idx(reqs.size());
  int sleep_us = 5;
  while (left > 0) {
    int n = 0;
    MPI_Testsome(static_cast<int>(reqs.size()), reqs.data(), &n, idx.data(), MPI_STATUSES_IGNORE);
    if (n != MPI_UNDEFINED && n > 0) {
      for (int k = 0; k < n; ++k) done[idx[k]] = true;
      left -= n;
      sleep_us = 5;
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::string missing;
      for (size_t i = 0; i < reqs.size(); ++i)
        if (!done[i]) missing += (missing.empty() ? "" : ", ") + std::to_string(peers[i]);
      fail("MPI rank {}: no answer within {} s (BOSCH_MPI_TIMEOUT) from rank(s) {} ({}): a rank died or hangs; "
           "ending the run (a search's journal holds every finished evaluation: rerun it with --resume, any "
           "number of ranks)", g_rank, limit, missing, what);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    sleep_us = std::min(sleep_us * 2, 500);
  }
}
#endif
}  // namespace

// srun without an MPI plugin starts tasks that each see one process: each would run the whole
// search and write the same files.
static void warn_lone_slurm_task() {
  const char* n = std::getenv("SLURM_NTASKS");
  if (g_size == 1 && std::getenv("SLURM_PROCID") && std::getenv("SLURM_STEP_ID") && n && std::atoi(n) > 1)
    std::fprintf(stderr, "bosch: warning: Slurm started %s tasks but this one sees no MPI peers: each runs alone "
                 "(use srun --mpi=pmix with bosch built with MPI, or mpirun)\n", n);
}

void init(int* argc, char*** argv) {
#ifdef BOSCH_WITH_MPI
  if (!g_started && launched_by_mpi()) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);  // only the main thread calls MPI
    g_started = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_size > 1 && g_rank == 0) std::signal(SIGTERM, on_sigterm);
    if (g_rank != 0) {  // rank 0 alone reports; errors keep a way out
      g_error_fd = ::dup(2);
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) {
        std::fflush(stdout), std::fflush(stderr);
        ::dup2(null, 1), ::dup2(null, 2), ::close(null);
      }
    }
  }
#else
  (void)argc, (void)argv;
#endif
  warn_lone_slurm_task();
}

void finalize() {
#ifdef BOSCH_WITH_MPI
  if (g_started) MPI_Finalize();
  g_started = false;
#endif
}

int rank() { return g_rank; }
int size() { return g_size; }
int error_fd() { return g_error_fd; }

double timeout_seconds() {
  static const double t = [] {
    const char* e = std::getenv("BOSCH_MPI_TIMEOUT");
    if (!e || !*e) return 600.0;
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    check(end && *end == '\0' && v > 0, "BOSCH_MPI_TIMEOUT={}: expected a number of seconds > 0", e);
    return v;
  }();
  return t;
}

void abort(int code) {
#ifdef BOSCH_WITH_MPI
  std::signal(SIGTERM, SIG_DFL);  // this rank has said why it ends; the launcher's SIGTERM adds nothing
  if (g_started && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

std::vector<double> gather_to_root(const std::vector<double>& mine, const std::vector<int>& counts) {
  check(counts.size() == static_cast<size_t>(g_size) && counts[g_rank] == static_cast<int>(mine.size()),
        "mpi gather: rank {} has {} values, expected {}", g_rank, mine.size(),
        counts.size() > static_cast<size_t>(g_rank) ? counts[g_rank] : -1);
  if (g_size == 1) return mine;
#ifdef BOSCH_WITH_MPI
  constexpr int kTag = 23;
  if (g_rank != 0) {
    std::vector<MPI_Request> req(1);
    MPI_Isend(mine.data(), counts[g_rank], MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD, req.data());
    wait_all(req, {0}, "sending its sample scores");
    return {};
  }
  std::vector<size_t> offset(g_size + 1, 0);
  for (int r = 0; r < g_size; ++r) offset[r + 1] = offset[r] + counts[r];
  std::vector<double> all(offset[g_size]);
  std::copy(mine.begin(), mine.end(), all.begin());
  std::vector<MPI_Request> reqs;
  std::vector<int> peers;
  for (int r = 1; r < g_size; ++r) {
    reqs.emplace_back();
    peers.push_back(r);
    MPI_Irecv(all.data() + offset[r], counts[r], MPI_DOUBLE, r, kTag, MPI_COMM_WORLD, &reqs.back());
  }
  wait_all(reqs, peers, "waiting for their sample scores");
  return all;
#else
  return mine;
#endif
}

void broadcast(std::vector<double>& data, int n) {
  if (g_size == 1) return;
#ifdef BOSCH_WITH_MPI
  constexpr int kTag = 24;
  data.resize(static_cast<size_t>(n));
  std::vector<MPI_Request> reqs;
  std::vector<int> peers;
  if (g_rank == 0) {  // point to point, so a timeout can name the rank that stopped listening
    for (int r = 1; r < g_size; ++r) {
      reqs.emplace_back();
      peers.push_back(r);
      MPI_Isend(data.data(), n, MPI_DOUBLE, r, kTag, MPI_COMM_WORLD, &reqs.back());
    }
    wait_all(reqs, peers, "sending the combined score");
  } else {
    reqs.emplace_back();
    peers.push_back(0);
    MPI_Irecv(data.data(), n, MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD, &reqs.back());
    wait_all(reqs, peers, "waiting for the combined score");
  }
#else
  (void)data, (void)n;
#endif
}

}  // namespace bosch::mpi
