// comm.hpp: one communicator (dlrt_comm) and the point-to-point machinery every collective
// is built from (comm.cc).
//
// A collective is one Exchange: it posts non-blocking sends and receives (MPI_Isend/Irecv on
// the communicator's own MPI_Comm_dup of MPI_COMM_WORLD), then waits for them by polling
// (MPI_Testsome, with a yield or a short sleep between polls) against the communicator's
// deadline. Because every wait is a poll that knows which requests are still open, a timeout
// names exactly the ranks still awaited, and nothing ever blocks inside MPI.
//
// Ownership of memory: MPI only ever reads or writes the communicator's own Staging buffers,
// never the caller's. Collectives copy the caller's data in and the result out. That costs a
// memcpy, and buys two things: send == recv (in place) needs no special case, and after a
// failure a request that cannot be cancelled (Open MPI cannot cancel a send) can simply be
// released (MPI_Request_free) with its buffer kept alive for ever, while the caller is free to
// reuse or free its buffers as soon as the call returns.
//
// Errors: the first error breaks the communicator for good (the ranks may no longer agree on
// which message is which). It is remembered, and every later call returns FAILED_PRECONDITION
// repeating it; the host is expected to comm_abort.
//
// Threads: one communicator is used by one thread at a time (plugin.h's rule for streams and
// kernels, applied to communicators); different communicators may be used concurrently, as
// every MPI call holds the plugin-wide mpi_mutex().
#pragma once

#include <dlrt/status.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "deadline.hpp"

namespace dlrt::mpi {

// Host memory a communicator owns for MPI to read and write: one slot per purpose (a collective
// uses slots 0..nranks). Reused from call to call; grows, never shrinks.
class Staging {
 public:
  Staging() = default;
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging();

  // Slot `slot`, at least `bytes` long; its contents are unspecified.
  unsigned char* get(size_t slot, size_t bytes);
  // A request that may still touch these buffers was released: never free them (leaked on
  // purpose; this happens only on a communicator that already failed).
  void abandon() { abandoned_ = true; }

 private:
  struct Slot {
    std::unique_ptr<unsigned char[]> data;
    size_t bytes = 0;
  };
  std::vector<Slot> slots_;
  bool abandoned_ = false;
};

}  // namespace dlrt::mpi

// The ABI's opaque communicator: one rank of a communicator over MPI_COMM_WORLD.
struct dlrt_comm {
  MPI_Comm mpi = MPI_COMM_NULL;  // our MPI_Comm_dup of MPI_COMM_WORLD (MPI_ERRORS_RETURN)
  int32_t nranks = 0;
  int32_t rank = 0;
  int64_t timeout_ms = 0;  // <= 0: wait without a deadline
  int tag_ub = 32767;      // the largest tag MPI allows (MPI_TAG_UB)
  uint64_t calls = 0;      // exchanges started; the next one's tag is calls % (tag_ub + 1)
  // The first error (DLRT_OK while healthy); later calls repeat it.
  dlrt_code error_code = DLRT_OK;
  std::string error_message;
  dlrt::mpi::Staging staging;
};

namespace dlrt::mpi {

// Throws FAILED_PRECONDITION (repeating the first error) if `comm` is broken; INVALID_ARGUMENT
// if it is NULL. `op` names the entry in the message.
void check_usable(const dlrt_comm* comm, const std::string& op);

// The point-to-point traffic of one collective call. Posts as it is told, then wait() polls
// until everything completed, the deadline passed, or MPI reported an error; on any failure
// the communicator is broken, open requests are retired, and dlrt::plugin::Error is thrown.
class Exchange {
 public:
  // The deadline is the communicator's timeout from now, or the given one (comm_create's,
  // which started before the communicator existed).
  Exchange(dlrt_comm* comm, std::string op);
  Exchange(dlrt_comm* comm, std::string op, const Deadline& deadline);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange();  // retires requests still open (only if wait() was never reached)

  // `data` must be comm->staging memory: it stays valid even if the request is abandoned.
  void send(int peer, const unsigned char* data, size_t bytes);
  void recv(int peer, unsigned char* data, size_t bytes);
  void wait();

 private:
  struct Pending {
    int peer;
    bool is_recv;
    int expected_bytes;  // one message (a buffer larger than kMaxMessage is several)
  };
  void post(int peer, bool is_recv, unsigned char* data, size_t bytes);
  // Marks the communicator broken, retires every open request, throws.
  [[noreturn]] void fail_comm(dlrt_code code, const std::string& what);
  std::set<int> open_peers() const;                          // ranks with a request open
  std::string peers_text(const std::set<int>& peers) const;  // "rank 1 of 2", "ranks 1, 3 of 4"
  void retire_open_requests() noexcept;

  dlrt_comm* comm_;
  std::string op_;
  Deadline deadline_;
  int tag_;
  std::vector<MPI_Request> requests_;  // MPI_REQUEST_NULL once complete
  std::vector<Pending> pending_;       // parallel to requests_
};

}  // namespace dlrt::mpi
