// final_barrier.cc: the shutdown barrier (final_barrier.hpp), built from the same polled
// Exchange as the collectives, so a missing rank is named exactly as in a collective timeout.
#include "final_barrier.hpp"

#include <mpi.h>

#include <mutex>

#include "comm.hpp"
#include "plugin_support.hpp"
#include "runtime.hpp"

namespace dlrt::mpi {

std::string final_barrier(int64_t timeout_ms) {
  // A communicator in name only: the world itself, borrowed (never freed here). Its staging
  // memory lives on this stack frame; if a request had to be released unfinished, Exchange
  // marks it abandoned and ~Staging leaks it rather than free memory MPI may still write.
  dlrt_comm world;
  world.mpi = MPI_COMM_WORLD;
  world.timeout_ms = timeout_ms;
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    int size = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    world.nranks = size;
    world.rank = rank;
  }
  if (world.nranks <= 1) return "";  // nobody to wait for
  try {
    Exchange ex(&world, "shutdown barrier");
    unsigned char* token = world.staging.get(0, 1);
    if (world.rank == 0) {
      for (int p = 1; p < world.nranks; ++p) ex.recv(p, token, 0);
      ex.wait();
      for (int p = 1; p < world.nranks; ++p) ex.send(p, token, 0);
    } else {
      ex.send(0, token, 0);
      ex.recv(0, token, 0);
    }
    ex.wait();
  } catch (const dlrt::plugin::Error& e) {
    return e.what();
  } catch (const std::exception& e) {  // e.g. bad_alloc while posting
    return std::string("mpi shutdown barrier: ") + e.what();
  }
  return "";
}

}  // namespace dlrt::mpi
