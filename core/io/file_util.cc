// io/file_util.cc: see file_util.hpp. What opens, creates and renames files is per system:
// io/file_util_posix.cc and io/file_util_windows.cc.
#include "io/file_util.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dlrt::core::io {

Error errno_error(int err, const std::string& what) {
  dlrt_code code = DLRT_UNKNOWN;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      code = DLRT_NOT_FOUND;
      break;
    case EACCES:
    case EPERM:
    case EROFS:
      code = DLRT_PERMISSION_DENIED;
      break;
    case ENOSPC:
#ifdef EDQUOT  // not in the Windows C runtime
    case EDQUOT:
#endif
    case ENOMEM:
      code = DLRT_RESOURCE_EXHAUSTED;
      break;
    case EISDIR:
    case ENAMETOOLONG:
      code = DLRT_INVALID_ARGUMENT;
      break;
    case EIO:
      code = DLRT_DATA_LOSS;
      break;
    default:
      break;
  }
  return Error(code, fmt::format("{}: {}", what, std::strerror(err)));
}

File::~File() {
  if (f_ != nullptr) std::fclose(f_);
}

size_t File::read(void* dst, size_t n) {
  size_t got = std::fread(dst, 1, n, f_);
  if (got < n && std::ferror(f_))
    throw errno_error(errno != 0 ? errno : EIO, fmt::format("read error in '{}'", path_));
  return got;
}

}  // namespace dlrt::core::io
