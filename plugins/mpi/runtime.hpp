// runtime.hpp: the process-wide MPI state of the mpi plugin (runtime.cc).
//
// MPI is one per process, so this state is too: it is not per plugin instance. It answers
// three questions:
//   - who initialises MPI, and when: the first comm_create, never plugin_create (every dlrt
//     program loads every plugin; most are not MPI jobs). If the program initialised MPI
//     itself, the plugin uses it as it is and leaves finalising to the program;
//   - who finalises it: the last plugin_destroy, only if this plugin initialised MPI, no
//     communicator is alive, none ever failed or was aborted (MPI_Finalize may then wait
//     forever for a peer that is gone), and every rank then answers a final barrier within
//     the latest communicator's timeout (final_barrier.hpp); when one does not, MPI_Finalize
//     is skipped and a warning names the rank;
//   - how MPI calls are serialised: every MPI call this plugin makes holds mpi_mutex(), so
//     MPI_THREAD_SERIALIZED is enough even when communicators are used from several threads
//     (the one exception, MPI_Init_thread on its own thread, runs before any other call).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "deadline.hpp"

namespace dlrt::mpi {

// Held around every MPI call the plugin makes (never while sleeping between polls).
std::mutex& mpi_mutex();

// Makes sure MPI is initialised, initialising it if nobody has: MPI_Init_thread asking for
// MPI_THREAD_SERIALIZED, after making libmpi's symbols global (see runtime.cc). Open MPI's
// MPI_Init waits until every rank of the job has started MPI, with no timeout of its own, so
// it runs on a background thread and this call waits for it until `deadline`. On expiry it
// throws DEADLINE_EXCEEDED (`self` names this process in the message, e.g. "rank 0 of 2")
// while MPI keeps initialising: a later call waits for the same initialisation again.
// Other errors (dlrt::plugin::Error): FAILED_PRECONDITION when MPI was already finalised in
// this process, UNAVAILABLE when MPI_Init_thread fails. The caller does not hold mpi_mutex().
void ensure_initialized(const Deadline& deadline, const std::string& self);

// Bookkeeping that decides whether MPI_Finalize is safe (see above).
void instance_created();
// Finalises MPI when the conditions above hold; bounded by the final barrier's timeout.
void instance_destroyed();
// timeout_ms: the new communicator's; the final barrier uses the latest one's.
void comm_created(int64_t timeout_ms);
void comm_released();
// A communicator failed (timeout, peer error) or was aborted: never MPI_Finalize from here on.
void note_failure();

// MPI's text for an error code, e.g. "MPI_ERR_TRUNCATE: message truncated".
std::string error_string(int mpi_error);

}  // namespace dlrt::mpi
