// collectives.cc: the collectives table (plugin.h, "Host-memory communicators") over MPI.
//
// Every communicator spans MPI_COMM_WORLD: rank and size are MPI's, which mpirun sets. There
// is nothing for comm_id_create to make, so its id is a fixed tag (kWorldId) for hosts that
// follow the generic protocol, and comm_create ignores the id it is given (any bytes, or
// NULL): the host cannot ship an id to the other ranks before it has a communicator, and
// MPI_COMM_WORLD needs none.
//
// Algorithms, all on non-blocking point-to-point messages (comm.hpp's Exchange):
//   all_reduce  a star through rank 0: every other rank sends its buffer to rank 0; rank 0
//               folds them in rank order, ((x0 op x1) op x2) ..., and sends the result back
//               to every rank. Every rank therefore gets the same bits, run after run, and a
//               wait always knows exactly which rank it is waiting for. The price: rank 0
//               moves (nranks - 1) buffers each way and holds nranks of them. Fine for the
//               CPU multi-worker gradients this exists for; a ring would scale better and
//               could keep the same fixed order, should it ever matter.
//   broadcast   root sends to every other rank.
//   all_gather  every rank sends its block to every other rank (no arithmetic, so no
//               ordering question).
// Calls are synchronous (stream must be NULL) and copy through the communicator's staging
// memory, so send == recv (in place) is always fine.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "collectives.hpp"
#include "comm.hpp"
#include "deadline.hpp"
#include "plugin_support.hpp"
#include "reduce.hpp"
#include "runtime.hpp"

namespace dlrt::mpi {
namespace {

using dlrt::plugin::fail;
using dlrt::plugin::guard;
using dlrt::plugin::guard_void;
using dlrt::plugin::require;

// The id comm_id_create writes (zero-padded to DLRT_COMM_ID_BYTES). It carries nothing:
// comm_create ignores ids.
constexpr char kWorldId[] = "dlrt-mpi:MPI_COMM_WORLD";

// The checks every collective starts with; returns count * dtype size in bytes.
size_t check_call(dlrt_comm* comm, const std::string& op, size_t count, int32_t dtype,
                  dlrt_stream* stream) {
  check_usable(comm, op);
  if (stream != nullptr)
    fail(DLRT_INVALID_ARGUMENT, "mpi " + op +
                                    ": communicators over host memory are synchronous: stream "
                                    "must be NULL");
  size_t size = dtype_size(dtype);
  if (size == 0)
    fail(DLRT_INVALID_ARGUMENT, "mpi " + op + ": " + dtype_name(dtype) + " is not a dtype");
  if (count > SIZE_MAX / size / static_cast<size_t>(comm->nranks))
    fail(DLRT_INVALID_ARGUMENT, "mpi " + op + ": count " + std::to_string(count) + " is too large");
  return count * size;
}

// ---- communicators ------------------------------------------------------------------------

dlrt_status* comm_id_create(dlrt_plugin*, uint8_t out_id[DLRT_COMM_ID_BYTES]) {
  return guard([&] {
    require(out_id, "out_id");
    std::memset(out_id, 0, DLRT_COMM_ID_BYTES);
    std::memcpy(out_id, kWorldId, sizeof kWorldId);
  });
}

// MPI_Comm_idup of MPI_COMM_WORLD, polled against the deadline (the blocking MPI_Comm_dup
// would wait for ever for a rank that never calls comm_create).
void dup_world(dlrt_comm* comm, const Deadline& deadline) {
  // MPI writes the new handle when the request completes, which after a timeout may be never
  // or after we have returned: so it writes into memory of its own, leaked on a timeout.
  auto handle = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  MPI_Request request = MPI_REQUEST_NULL;
  int rc;
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    rc = MPI_Comm_idup(MPI_COMM_WORLD, handle.get(), &request);
  }
  if (rc != MPI_SUCCESS)
    fail(DLRT_UNAVAILABLE, "mpi comm_create: MPI_Comm_idup failed: " + error_string(rc));
  for (;;) {
    int flag = 0;
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      rc = MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
      note_failure();
      (void)handle.release();
      fail(DLRT_UNAVAILABLE, "mpi comm_create: MPI_Comm_idup failed: " + error_string(rc));
    }
    if (flag) {
      comm->mpi = *handle;
      return;
    }
    if (deadline.passed()) {
      // The request stays open (a non-blocking collective can be neither cancelled nor
      // freed), so this process must not MPI_Finalize any more.
      note_failure();
      (void)handle.release();
      fail(DLRT_DEADLINE_EXCEEDED,
           "mpi comm_create: not all " + std::to_string(comm->nranks) + " ranks joined within " +
               deadline.text() +
               " (DLRT_COLLECTIVE_TIMEOUT; MPI_Comm_idup of MPI_COMM_WORLD did not complete); a "
               "rank may have died or not called comm_create (this process is rank " +
               std::to_string(comm->rank) + " of " + std::to_string(comm->nranks) + ")");
    }
    deadline.pause();
  }
}

// Start-up barrier, a star through rank 0 (names the rank that is missing, unlike
// MPI_Barrier): everyone reports to rank 0, rank 0 answers everyone.
void startup_barrier(dlrt_comm* comm, const Deadline& deadline) {
  Exchange ex(comm, "comm_create", deadline);
  unsigned char* token = comm->staging.get(0, 1);
  if (comm->rank == 0) {
    for (int p = 1; p < comm->nranks; ++p) ex.recv(p, token, 0);
    ex.wait();
    for (int p = 1; p < comm->nranks; ++p) ex.send(p, token, 0);
  } else {
    ex.send(0, token, 0);
    ex.recv(0, token, 0);
  }
  ex.wait();
}

dlrt_status* comm_create(dlrt_device* device, const uint8_t id[DLRT_COMM_ID_BYTES], int32_t nranks,
                         int32_t rank, int64_t timeout_ms, dlrt_comm** out_comm) {
  if (out_comm != nullptr) *out_comm = nullptr;
  return guard([&] {
    require(out_comm, "out_comm");
    if (device != nullptr)
      fail(DLRT_UNIMPLEMENTED, "mpi: communicators over host memory only (device must be NULL)");
    (void)id;  // ignored: every communicator is MPI_COMM_WORLD's (see the top of this file)
    if (nranks < 1 || rank < 0 || rank >= nranks)
      fail(DLRT_INVALID_ARGUMENT, "mpi comm_create: rank " + std::to_string(rank) + " of " +
                                      std::to_string(nranks) + " is not a rank");
    const Deadline deadline(timeout_ms);  // for the whole call: MPI_Init, idup, barrier
    auto comm = std::make_unique<dlrt_comm>();
    comm->nranks = nranks;
    comm->rank = rank;
    comm->timeout_ms = timeout_ms;
    ensure_initialized(deadline, "rank " + std::to_string(rank) + " of " + std::to_string(nranks));
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      int world_size = 0, world_rank = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &world_size);
      MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
      if (world_size != nranks || world_rank != rank)
        fail(DLRT_INVALID_ARGUMENT,
             "mpi comm_create: asked to be rank " + std::to_string(rank) + " of " +
                 std::to_string(nranks) + ", but MPI_COMM_WORLD has this process as rank " +
                 std::to_string(world_rank) + " of " + std::to_string(world_size) +
                 " (start the program with mpirun -np " + std::to_string(nranks) +
                 " and take rank and size from MPI's environment)");
    }
    dup_world(comm.get(), deadline);
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      MPI_Comm_set_errhandler(comm->mpi, MPI_ERRORS_RETURN);
      void* value = nullptr;
      int flag = 0;
      MPI_Comm_get_attr(comm->mpi, MPI_TAG_UB, &value, &flag);
      if (flag && value != nullptr) comm->tag_ub = *static_cast<int*>(value);
    }
    comm_created(timeout_ms);
    try {
      startup_barrier(comm.get(), deadline);
    } catch (...) {
      // The communicator failed (and note_failure was called): its MPI handle is left as it
      // is, since freeing it gains nothing and must not wait for anyone.
      comm_released();
      throw;
    }
    *out_comm = comm.release();
  });
}

void comm_destroy(dlrt_comm* comm) {
  guard_void("comm_destroy", [&] {
    if (comm == nullptr) return;
    std::unique_ptr<dlrt_comm> owned(comm);
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      if (comm->mpi != MPI_COMM_NULL) MPI_Comm_free(&comm->mpi);  // local: waits for nobody
    }
    comm_released();
  });
}

// Never waits for a peer, and makes no MPI call at all: the MPI handle is leaked on purpose
// (nothing more will travel on it), and MPI_Finalize is skipped from now on (note_failure).
// No request can be open here: calls are synchronous, and a failed call has already
// cancelled or released its own (Exchange::retire_open_requests), abandoning the staging
// memory if MPI might still touch it, which ~Staging then does not free.
void comm_abort(dlrt_comm* comm) {
  guard_void("comm_abort", [&] {
    if (comm == nullptr) return;
    std::unique_ptr<dlrt_comm> owned(comm);
    note_failure();
    comm_released();
  });
}

// ---- collectives --------------------------------------------------------------------------

dlrt_status* all_reduce(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                        int32_t reduce_op, dlrt_stream* stream) {
  return guard([&] {
    const size_t bytes = check_call(comm, "all_reduce", count, dtype, stream);
    if (!reduce_supported(dtype, reduce_op))
      fail(DLRT_UNIMPLEMENTED, "mpi all_reduce: " + reduce_op_name(reduce_op) + " of " +
                                   dtype_name(dtype) +
                                   " is not supported (SUM, PROD, MAX, MIN of f32, f64, i32, "
                                   "i64; AVG of f32, f64)");
    if (count == 0) return;
    require(send, "send");
    require(recv, "recv");
    Staging& staging = comm->staging;
    Exchange ex(comm, "all_reduce");
    if (comm->rank == 0) {
      unsigned char* acc = staging.get(0, bytes);
      std::memcpy(acc, send, bytes);
      for (int p = 1; p < comm->nranks; ++p)
        ex.recv(p, staging.get(static_cast<size_t>(p), bytes), bytes);
      ex.wait();
      for (int p = 1; p < comm->nranks; ++p)  // rank order: the same bits on every run
        reduce_into(acc, staging.get(static_cast<size_t>(p), bytes), count, dtype, reduce_op);
      finish_reduce(acc, count, dtype, reduce_op, comm->nranks);
      for (int p = 1; p < comm->nranks; ++p) ex.send(p, acc, bytes);
      std::memcpy(recv, acc, bytes);
      ex.wait();
    } else {
      unsigned char* out = staging.get(0, bytes);
      unsigned char* in = staging.get(1, bytes);
      std::memcpy(out, send, bytes);
      ex.send(0, out, bytes);
      ex.recv(0, in, bytes);
      ex.wait();
      std::memcpy(recv, in, bytes);
    }
  });
}

dlrt_status* broadcast(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                       int32_t root, dlrt_stream* stream) {
  return guard([&] {
    const size_t bytes = check_call(comm, "broadcast", count, dtype, stream);
    if (root < 0 || root >= comm->nranks)
      fail(DLRT_INVALID_ARGUMENT, "mpi broadcast: root " + std::to_string(root) +
                                      " is not a rank of " + std::to_string(comm->nranks));
    if (count == 0) return;
    require(recv, "recv");
    unsigned char* buf = comm->staging.get(0, bytes);
    Exchange ex(comm, "broadcast");
    if (comm->rank == root) {
      require(send, "send");
      std::memcpy(buf, send, bytes);
      for (int p = 0; p < comm->nranks; ++p)
        if (p != root) ex.send(p, buf, bytes);
      std::memcpy(recv, buf, bytes);
      ex.wait();
    } else {  // `send` is not read off the root, as in NCCL
      ex.recv(root, buf, bytes);
      ex.wait();
      std::memcpy(recv, buf, bytes);
    }
  });
}

dlrt_status* all_gather(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                        dlrt_stream* stream) {
  return guard([&] {
    const size_t bytes = check_call(comm, "all_gather", count, dtype, stream);
    if (count == 0) return;
    require(send, "send");
    require(recv, "recv");
    const size_t me = static_cast<size_t>(comm->rank);
    Staging& staging = comm->staging;
    unsigned char* mine = staging.get(me, bytes);
    std::memcpy(mine, send, bytes);  // before recv is written: send may lie inside recv
    Exchange ex(comm, "all_gather");
    for (int p = 0; p < comm->nranks; ++p) {
      if (static_cast<size_t>(p) == me) continue;
      ex.recv(p, staging.get(static_cast<size_t>(p), bytes), bytes);
      ex.send(p, mine, bytes);
    }
    ex.wait();
    auto* out = static_cast<unsigned char*>(recv);
    for (size_t p = 0; p < static_cast<size_t>(comm->nranks); ++p)
      std::memcpy(out + p * bytes, staging.get(p, bytes), bytes);
  });
}

}  // namespace

const dlrt_collective_api* collective_table() {
  static const dlrt_collective_api table = {
      .struct_size = sizeof(dlrt_collective_api),
      .comm_id_create = comm_id_create,
      .comm_create = comm_create,
      .group_begin = nullptr,  // creates need no grouping: one communicator per process
      .group_end = nullptr,
      .comm_destroy = comm_destroy,
      .comm_abort = comm_abort,
      .all_reduce = all_reduce,
      .broadcast = broadcast,
      .all_gather = all_gather,
      .flags = DLRT_COLLECTIVES_HOST_MEMORY,  // how the core finds its transport between workers
  };
  return &table;
}

}  // namespace dlrt::mpi
