// worker_env.cc: see worker_env.hpp.
#include "distribute/worker_env.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "status.hpp"

namespace dlrt::core::distribute {
namespace {

// The names of one launcher's variables.
struct Family {
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* label;
};

constexpr Family kOpenMpi = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                             "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_*"};
constexpr Family kTorchrun = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK/WORLD_SIZE"};

// The value of `name`, nullopt when unset or empty (how shells clear a variable).
std::optional<std::string> get(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// A decimal integer in [0, INT32_MAX]: digits only, no sign, no spaces.
int32_t parse_count(const char* name, const std::string& text) {
  bool digits = text.size() <= 10;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  const long long v = digits ? std::strtoll(text.c_str(), nullptr, 10) : -1;
  if (!digits || v > INT32_MAX)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}='{}' is not a worker number; expected a non-negative decimal integer",
                     name, text));
  return static_cast<int32_t>(v);
}

WorkerEnv read_family(const EnvLookup& env, const Family& f) {
  std::optional<std::string> rank = get(env, f.rank), size = get(env, f.size);
  if (!rank || !size)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{} is set but {} is not; a launcher sets both (rank {}, size {})",
                     rank ? f.rank : f.size, rank ? f.size : f.rank, rank ? *rank : "unset",
                     size ? *size : "unset"));
  WorkerEnv w;
  w.source = f.label;
  w.rank = parse_count(f.rank, *rank);
  w.size = parse_count(f.size, *size);
  if (w.size < 1)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}='{}': expected at least 1 worker", f.size, *size));
  if (w.rank >= w.size)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}='{}' is not below {}='{}'; expected 0 <= rank "
                                            "< size",
                                            f.rank, *rank, f.size, *size));
  if (std::optional<std::string> local = get(env, f.local_rank)) {
    w.local_rank = parse_count(f.local_rank, *local);
    if (w.local_rank >= w.size)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}='{}' is not below {}='{}'; expected 0 <= "
                                              "local rank < size",
                                              f.local_rank, *local, f.size, *size));
  }
  return w;
}

}  // namespace

WorkerEnv read_worker_env(const EnvLookup& env_in) {
  const EnvLookup env = env_in ? env_in : EnvLookup([](const char* n) { return std::getenv(n); });
  for (const Family& f : {kOpenMpi, kTorchrun})
    if (get(env, f.rank) || get(env, f.size)) return read_family(env, f);
  return WorkerEnv{};
}

}  // namespace dlrt::core::distribute
