// io/file_util_windows.cc: the Windows part of file_util.hpp: File's checked open and the
// AtomicFileWriter. Paths are UTF-8 in the core and widened for the C runtime's _w* calls
// (the narrow ones would read them in the ANSI code page). The writer writes a temporary
// file beside the target, flushes it to disk (_commit, Windows' fsync) and moves it over the
// target with MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH), which is as
// atomic as Windows makes a replacement and returns only once the move is on disk.
#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <share.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/file_util.hpp"
#include "platform/windows/text.hpp"

namespace dlrt::core::io {

using platform::win::widen;

const char* file_kind(mode_t mode) {
  if ((mode & _S_IFMT) == _S_IFDIR) return "a folder";
  if ((mode & _S_IFMT) == _S_IFCHR) return "a character device";
  if ((mode & _S_IFMT) == _S_IFIFO) return "a pipe";
  if ((mode & _S_IFMT) == _S_IFREG) return "a regular file";
  return "not a file";
}

File::File(const std::string& path) : path_(path) {
  f_ = ::_wfopen(widen(path).c_str(), L"rb");
  if (f_ == nullptr) {
    // _wfopen of a folder fails with EACCES; say what it is rather than "permission denied".
    struct _stat64 st {};
    if (::_wstat64(widen(path).c_str(), &st) == 0 && (st.st_mode & _S_IFMT) == _S_IFDIR)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("'{}' is a folder, not a regular file; expected a regular file", path));
    throw errno_error(errno, fmt::format("cannot open '{}'", path));
  }
  struct _stat64 st {};
  if (::_fstat64(::_fileno(f_), &st) != 0) {
    const int err = errno;
    std::fclose(f_);
    f_ = nullptr;
    throw errno_error(err, fmt::format("cannot stat '{}'", path));
  }
  if ((st.st_mode & _S_IFMT) != _S_IFREG) {
    std::fclose(f_);
    f_ = nullptr;
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("'{}' is {}, not a regular file; expected a regular file", path,
                     file_kind(static_cast<mode_t>(st.st_mode))));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

// ---- AtomicFileWriter -------------------------------------------------------------------

AtomicFileWriter::AtomicFileWriter(const std::string& path) : path_(path) {
  if (path.empty()) fail(DLRT_INVALID_ARGUMENT, "checkpoint path is empty");
  const DWORD attrs = ::GetFileAttributesW(widen(path).c_str());
  if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("cannot write '{}': it is a folder; expected a file path", path));
  const size_t slash = path.find_last_of("\\/");
  dir_ = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty())
    fail(DLRT_INVALID_ARGUMENT, fmt::format("cannot write '{}': it names a folder", path));
  // A unique name: process id and a counter; _O_EXCL refuses to reuse an existing file.
  static std::atomic<unsigned> counter{0};
  for (int tries = 0; tries < 100 && fd_ < 0; ++tries) {
    const std::string temp =
        fmt::format("{}.{}.tmp.{}.{}", slash == std::string::npos ? "" : dir_, base,
                    ::GetCurrentProcessId(), counter++);
    const int err = ::_wsopen_s(&fd_, widen(temp).c_str(),
                                _O_CREAT | _O_EXCL | _O_WRONLY | _O_BINARY, _SH_DENYRW,
                                _S_IREAD | _S_IWRITE);
    if (err == 0) {
      temp_path_ = temp;
    } else if (err != EEXIST) {
      fd_ = -1;
      throw errno_error(err, fmt::format("cannot create a temp file in '{}' to write '{}'",
                                         dir_, path));
    } else {
      fd_ = -1;
    }
  }
  if (fd_ < 0)
    fail(DLRT_UNAVAILABLE,
         fmt::format("cannot create a temp file in '{}' to write '{}': 100 names taken", dir_,
                     path));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::_close(fd_);
  if (!committed_ && !temp_path_.empty()) ::_wunlink(widen(temp_path_).c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    // _write takes an unsigned int count.
    const unsigned chunk = n > (1u << 30) ? (1u << 30) : static_cast<unsigned>(n);
    const int w = ::_write(fd_, p, chunk);
    if (w < 0) throw errno_error(errno, fmt::format("write to '{}' failed", temp_path_));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void AtomicFileWriter::commit() {
  if (::_commit(fd_) != 0)
    throw errno_error(errno, fmt::format("flushing '{}' to disk failed", temp_path_));
  const int fd = fd_;
  fd_ = -1;
  if (::_close(fd) != 0) throw errno_error(errno, fmt::format("close of '{}' failed", temp_path_));
  if (!::MoveFileExW(widen(temp_path_).c_str(), widen(path_).c_str(),
                     MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
    fail(DLRT_UNAVAILABLE, fmt::format("cannot move '{}' over '{}': {}", temp_path_, path_,
                                       platform::win::error_text(::GetLastError())));
  committed_ = true;
}

}  // namespace dlrt::core::io
