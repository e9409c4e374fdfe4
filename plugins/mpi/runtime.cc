// runtime.cc: lazy MPI initialisation, the one MPI mutex, and the decision to finalise.
#include "runtime.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <string>
#include <thread>

#include "final_barrier.hpp"
#include "plugin_support.hpp"

namespace dlrt::mpi {
namespace {

using dlrt::plugin::fail;

// All guarded by mpi_mutex().
enum class Init { kNotStarted, kRunning, kDone, kFailed };
Init g_init = Init::kNotStarted;    // this plugin's view of MPI initialisation
std::string g_init_error;           // kFailed: why
bool g_we_initialised = false;      // MPI_Init_thread was ours: so is MPI_Finalize
bool g_failed = false;              // some communicator failed or was aborted
int g_instances = 0;                // live plugin instances
int g_comms = 0;                    // live communicators
int64_t g_shutdown_timeout_ms = 0;  // the latest communicator's timeout: the final barrier's

// Signalled when the initialising thread finishes (g_init leaves kRunning).
std::condition_variable& init_done() {
  static std::condition_variable cv;
  return cv;
}

// Open MPI opens its components (mca_pml_ob1.so, mca_btl_vader.so, ...) with dlopen, and
// they resolve libmpi's symbols (ompi_request_null, mca_bml, ...) through the global scope.
// The host loads plugins RTLD_LOCAL (Boost.DLL), so libmpi, pulled in as this plugin's
// dependency, is not in the global scope; an Open MPI whose components are not themselves
// linked against libmpi then fails in MPI_Init with "undefined symbol" errors from its
// components (the problem mpi4py and other dlopen'ed users of MPI work around the same way).
// Re-opening the already loaded libmpi with RTLD_NOLOAD | RTLD_GLOBAL promotes it, and the
// libraries it depends on, to the global scope without loading anything new. The handle is
// kept for the life of the process (one more reference, never closed).
// Debian's Open MPI 4.1.4 happens not to need it: most of its components link libmpi and are
// opened RTLD_GLOBAL, which drags libmpi into the global scope (checked by disabling this
// step: MPI_Init and the collectives still work, with and without mpirun). It is kept for the
// builds that do, and costs one dlopen of a library already loaded.
// Returns the library promoted, or "" (logged) if none was found.
std::string promote_libmpi_to_global() {
  // The library that really provides MPI_Init_thread: whatever soname the plugin linked.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) != 0 && info.dli_fname != nullptr &&
      dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr)
    return info.dli_fname;
  // Fallback: the sonames of Open MPI 3/4/5 and MPICH.
  for (const char* name : {"libmpi.so.40", "libmpi.so.20", "libmpi.so.12", "libmpi.so"})
    if (dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr) return name;
  dlrt::plugin::log(DLRT_LOG_WARNING,
                    "mpi: could not re-open libmpi with RTLD_GLOBAL; if MPI_Init then fails to "
                    "load its components, preload libmpi (LD_PRELOAD)");
  return "";
}

void warn_if_below_serialized(int provided, const char* who) {
  if (provided >= MPI_THREAD_SERIALIZED) return;
  dlrt::plugin::log(DLRT_LOG_WARNING,
                    std::string("mpi: MPI was initialised ") + who +
                        " with a thread level below MPI_THREAD_SERIALIZED (" +
                        std::to_string(provided) +
                        "); use the communicators from the thread that initialised MPI only");
}

}  // namespace

std::mutex& mpi_mutex() {
  static std::mutex m;
  return m;
}

std::string error_string(int mpi_error) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(mpi_error, text, &len) != MPI_SUCCESS)
    return "MPI error " + std::to_string(mpi_error);
  return std::string(text, static_cast<size_t>(len));
}

namespace {

// The background thread's whole job. It makes the only MPI call that does not hold
// mpi_mutex(): nothing else calls MPI while g_init is kRunning. (MPI asks that MPI_Finalize
// run on the thread that initialised MPI; Open MPI does not need it: plugin_destroy's thread
// finalises, as mpi_plugin_test's lifecycle test and mpi_np2_collectives check.)
void run_mpi_init() {
  int provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  std::lock_guard<std::mutex> lock(mpi_mutex());
  if (rc != MPI_SUCCESS) {
    g_init = Init::kFailed;
    g_init_error = "mpi: MPI_Init_thread failed: " + error_string(rc);
  } else {
    g_init = Init::kDone;
    g_we_initialised = true;
    // The world is ours: errors on it (e.g. in MPI_Comm_idup) come back as codes, not aborts.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    warn_if_below_serialized(provided, "by this plugin");
  }
  init_done().notify_all();
}

}  // namespace

void ensure_initialized(const Deadline& deadline, const std::string& self) {
  std::unique_lock<std::mutex> lock(mpi_mutex());
  if (g_init == Init::kNotStarted || g_init == Init::kDone) {
    int finalized = 0;
    MPI_Finalized(&finalized);  // may be called at any time, even before MPI_Init
    if (finalized)
      fail(DLRT_FAILED_PRECONDITION,
           "mpi: MPI was already finalised in this process (by the program, or by an earlier "
           "instance of this plugin when it was destroyed); MPI cannot be initialised twice");
  }
  if (g_init == Init::kNotStarted) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) {  // the program's own MPI: use it, never finalise it
      int provided = 0;
      MPI_Query_thread(&provided);
      warn_if_below_serialized(provided, "by the program");
      g_init = Init::kDone;
      return;
    }
    const std::string promoted = promote_libmpi_to_global();
    dlrt::plugin::log(DLRT_LOG_DEBUG, "mpi: initialising MPI (libmpi made global: " +
                                          (promoted.empty() ? std::string("no") : promoted) + ")");
    g_init = Init::kRunning;
    // Detached: if a rank never starts, MPI_Init never returns, and the process must still be
    // able to report that and exit.
    std::thread(run_mpi_init).detach();
  }
  auto settled = [] { return g_init != Init::kRunning; };
  if (deadline.none()) init_done().wait(lock, settled);
  else if (!init_done().wait_until(lock, deadline.at(), settled)) {
    g_failed = true;  // should MPI_Init complete later, the job is still broken: no MPI_Finalize
    fail(DLRT_DEADLINE_EXCEEDED,
         "mpi comm_create: MPI_Init_thread did not complete within " + deadline.text() +
             " (DLRT_COLLECTIVE_TIMEOUT): Open MPI's MPI_Init waits until every rank of the job "
             "has started MPI, and a rank may have died or not called comm_create yet (this "
             "process is " +
             self +
             "). MPI goes on initialising in the background; a later "
             "comm_create waits for it again");
  }
  if (g_init == Init::kFailed) fail(DLRT_UNAVAILABLE, g_init_error);
}

void instance_created() {
  std::lock_guard<std::mutex> lock(mpi_mutex());
  ++g_instances;
}

void comm_created(int64_t timeout_ms) {
  std::lock_guard<std::mutex> lock(mpi_mutex());
  ++g_comms;
  g_shutdown_timeout_ms = timeout_ms;
}

void comm_released() {
  std::lock_guard<std::mutex> lock(mpi_mutex());
  --g_comms;
}

void note_failure() {
  std::lock_guard<std::mutex> lock(mpi_mutex());
  g_failed = true;
}

// Decides under the lock, then runs the final barrier without it (the barrier's polls take
// the lock themselves, and a failure calls note_failure), then finalises under it again.
void instance_destroyed() {
  int64_t timeout_ms = 0;
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    if (--g_instances > 0 || !g_we_initialised) return;
    if (g_failed) {
      dlrt::plugin::log(DLRT_LOG_INFO,
                        "mpi: not calling MPI_Finalize: a communicator failed or was aborted, "
                        "and MPI_Finalize could wait forever for a peer that is gone");
      return;
    }
    if (g_comms > 0) {
      dlrt::plugin::log(DLRT_LOG_WARNING,
                        "mpi: not calling MPI_Finalize: " + std::to_string(g_comms) +
                            " communicator(s) were never destroyed");
      return;
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
      g_we_initialised = false;
      return;
    }
    timeout_ms = g_shutdown_timeout_ms;
  }
  // Every rank must reach here alive before MPI_Finalize, which would otherwise wait for ever
  // for a peer that died after the last collective (final_barrier.hpp).
  const std::string late = final_barrier(timeout_ms);
  std::lock_guard<std::mutex> lock(mpi_mutex());
  if (!late.empty()) {
    g_failed = true;  // the job is broken: no MPI_Finalize, now or later
    dlrt::plugin::log(DLRT_LOG_WARNING,
                      "mpi: not calling MPI_Finalize, which would wait for ever for a rank that "
                      "is gone; the process ends without it (mpirun may say so): " +
                          late);
    return;
  }
  if (g_instances > 0) return;  // a new instance appeared meanwhile: the last one finalises
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS)
      dlrt::plugin::log(DLRT_LOG_WARNING, "mpi: MPI_Finalize failed: " + error_string(rc));
  }
  g_we_initialised = false;
}

}  // namespace dlrt::mpi
