// status.cc: the dlrt_status_* functions of status.h and dlrt_code_name, and the core's
// status -> Error bridge (`fail` of a StatusValue or an ops::Status).
//
// dlrt_status_create must never fail (plugins call it on their error paths, often because
// memory ran out), so on allocation failure it hands out one static out-of-memory status that
// dlrt_status_free knows not to delete.
#include "status.hpp"

#include <fmt/format.h>

#include <new>

#include "ops/status.hpp"

namespace {

dlrt_status g_out_of_memory{DLRT_RESOURCE_EXHAUSTED, "out of host memory while creating a status"};

}  // namespace

extern "C" {

DLRT_API dlrt_status* dlrt_status_create(dlrt_code code, const char* message) {
  if (code == DLRT_OK) return nullptr;
  try {
    return new dlrt_status{code, message != nullptr ? message : ""};
  } catch (...) {  // std::bad_alloc, or a length_error from a huge message
    return &g_out_of_memory;
  }
}

DLRT_API dlrt_code dlrt_status_code(const dlrt_status* status) {
  return status == nullptr ? DLRT_OK : status->code;
}

DLRT_API const char* dlrt_status_message(const dlrt_status* status) {
  return status == nullptr ? "" : status->message.c_str();
}

DLRT_API void dlrt_status_free(dlrt_status* status) {
  if (status == nullptr || status == &g_out_of_memory) return;
  delete status;
}

DLRT_API const char* dlrt_code_name(dlrt_code code) {
  switch (code) {
    case DLRT_OK:
      return "OK";
    case DLRT_CANCELLED:
      return "CANCELLED";
    case DLRT_UNKNOWN:
      return "UNKNOWN";
    case DLRT_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case DLRT_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case DLRT_NOT_FOUND:
      return "NOT_FOUND";
    case DLRT_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case DLRT_PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case DLRT_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case DLRT_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case DLRT_ABORTED:
      return "ABORTED";
    case DLRT_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case DLRT_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case DLRT_INTERNAL:
      return "INTERNAL";
    case DLRT_UNAVAILABLE:
      return "UNAVAILABLE";
    case DLRT_DATA_LOSS:
      return "DATA_LOSS";
    case DLRT_UNAUTHENTICATED:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN_CODE";
}

}  // extern "C"

namespace dlrt::core {

namespace {

std::string with_context(std::string_view context, const std::string& message) {
  return context.empty() ? message : fmt::format("{}: {}", context, message);
}

}  // namespace

void fail(const StatusValue& s, std::string_view context) {
  fail(s.code, with_context(context, s.message));
}

void fail(const ops::Status& s, std::string_view context) {
  fail(s.code(), with_context(context, s.message()));
}

StatusValue take_status(dlrt_status* status) {
  StatusValue v;
  if (status == nullptr) return v;
  v.code = status->code;
  // A plugin bug could hand back a status whose code is OK; it is still an error, and a
  // caller that sees OK would carry on as if nothing happened.
  if (v.code == DLRT_OK) v.code = DLRT_UNKNOWN;
  v.message = status->message;
  dlrt_status_free(status);
  return v;
}

dlrt_status* status_from_current_exception() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return dlrt_status_create(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return dlrt_status_create(DLRT_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    try {
      return dlrt_status_create(DLRT_INTERNAL,
                                (std::string("internal error: ") + e.what()).c_str());
    } catch (...) {
      return dlrt_status_create(DLRT_INTERNAL, e.what());
    }
  } catch (...) {
    return dlrt_status_create(DLRT_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace dlrt::core
