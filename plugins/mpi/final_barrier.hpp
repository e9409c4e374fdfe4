// final_barrier.hpp: the barrier every rank passes before MPI_Finalize (final_barrier.cc).
//
// Why: Open MPI's MPI_Finalize synchronises with every rank of the job and has no timeout of
// its own, so a survivor whose peer died after the last collective waited in it for ever.
// This barrier runs first, under the same watchdog as every collective (the timeout of the
// most recently created communicator, i.e. DLRT_COLLECTIVE_TIMEOUT unless the program chose
// another). When it completes, every rank has reached shutdown alive and MPI_Finalize has
// nobody left to wait for; when it fails, the caller skips MPI_Finalize and says why.
#pragma once

#include <cstdint>
#include <string>

namespace dlrt::mpi {

// A star through rank 0 over MPI_COMM_WORLD (tag 0; the plugin's communicators are
// duplicates of the world, so no collective's message can match): every rank reports to rank
// 0, rank 0 answers everyone. timeout_ms <= 0 waits without a deadline.
// Returns "" when every rank answered, otherwise why not, naming the ranks that did not
// answer, e.g. "mpi shutdown barrier: rank 1 of 2 did not answer within 2.0 s
// (DLRT_COLLECTIVE_TIMEOUT); it may have died (this process is rank 0)".
// Never throws. The caller does not hold mpi_mutex(); MPI must be initialised and not
// finalised.
std::string final_barrier(int64_t timeout_ms);

}  // namespace dlrt::mpi
