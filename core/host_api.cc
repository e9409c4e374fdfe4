// host_api.cc: see host_api.hpp.
#include "host_api.hpp"

#include <string>

#include "log.hpp"

namespace dlrt::core {
namespace {

// host_api->log: plugins log through our logger so DLRT_LOG_LEVEL governs them too. The
// level is clamped, the name defaults: a plugin's bad arguments must not break logging.
void host_log(int32_t level, const char* plugin, const char* message) {
  if (level < DLRT_LOG_ERROR) level = DLRT_LOG_ERROR;
  if (level > DLRT_LOG_DEBUG) level = DLRT_LOG_DEBUG;
  try {
    std::string who = std::string("plugin ") + (plugin != nullptr ? plugin : "?");
    log_line(static_cast<dlrt_log_level>(level), who, message != nullptr ? message : "");
  } catch (...) {
  }
}

const dlrt_host_api kHostApi = {
    /*struct_size=*/sizeof(dlrt_host_api),
    /*abi_major=*/DLRT_ABI_MAJOR,
    /*abi_minor=*/DLRT_ABI_MINOR,
    /*status_create=*/&dlrt_status_create,
    /*status_free=*/&dlrt_status_free,
    /*log=*/&host_log,
};

}  // namespace

const dlrt_host_api* host_api() { return &kHostApi; }

}  // namespace dlrt::core
