// The process group of a run spread over MPI ranks (SPMD lockstep: every rank runs the same
// command; search/objectives/distributed_objective.h splits each evaluation's samples between them).
// Built without MPI (BOSCH_WITH_MPI unset), or started without an MPI launcher, this is one
// process: rank 0 of 1, and every call below is a cheap no-op.
//
// Faults: every wait on another rank gives up after timeout_seconds() (env BOSCH_MPI_TIMEOUT,
// default 600; twice that on ranks other than 0, so rank 0 reports first) with an Error naming
// the ranks that did not answer, so a dead or hung rank ends the run instead of hanging it;
// errors on any rank end the whole job (abort()).
#pragma once
#include <string>
#include <vector>

namespace bosch::mpi {

// Starts MPI when built with it and launched by mpirun/srun (or BOSCH_MPI=1); on ranks other
// than 0 stdout and stderr go to /dev/null (rank 0 alone reports), errors still reach stderr
// through error_stream(). Call once, first thing in main.
void init(int* argc, char*** argv);
void finalize();  // after init; a no-op for one process
int rank();
int size();
inline bool distributed() { return size() > 1; }
double timeout_seconds();

// Ends every rank of the job with `code` (MPI_Abort); plain exit for one process.
[[noreturn]] void abort(int code);
// Where errors are printed: stderr on rank 0, the original stderr on other ranks.
int error_fd();

// Every rank's `mine` (counts[r] doubles from rank r; counts the same on every rank) at rank 0,
// concatenated in rank order; other ranks get an empty vector. Error after the timeout, naming
// the ranks whose part did not arrive.
std::vector<double> gather_to_root(const std::vector<double>& mine, const std::vector<int>& counts);
// Rank 0's `data` (n doubles, n the same on every rank) on every rank. Error after the timeout.
void broadcast(std::vector<double>& data, int n);

}  // namespace bosch::mpi
