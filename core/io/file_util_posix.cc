// io/file_util_posix.cc: the POSIX part of file_util.hpp: File's checked open and the
// AtomicFileWriter (mkstemp, fsync, rename, fsync of the folder).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/file_util.hpp"

namespace dlrt::core::io {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a file";
}

// ---- File -------------------------------------------------------------------------------

File::File(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer appears (forever, for a
  // typo'd path to a pipe); with it the open returns at once, and fstat below refuses
  // everything that is not a regular file before a single byte is read. The flag is cleared
  // again for the regular file (it means nothing there, but keep reads plain).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw errno_error(errno, fmt::format("cannot open '{}'", path));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw errno_error(err, fmt::format("cannot stat '{}'", path));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("'{}' is {}, not a regular file; expected a regular file", path,
                     file_kind(st.st_mode)));
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  f_ = fdopen(fd, "rb");
  if (f_ == nullptr) {
    int err = errno;
    ::close(fd);
    throw errno_error(err, fmt::format("cannot open '{}'", path));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

// ---- AtomicFileWriter -------------------------------------------------------------------

AtomicFileWriter::AtomicFileWriter(const std::string& path) : path_(path) {
  if (path.empty()) fail(DLRT_INVALID_ARGUMENT, "checkpoint path is empty");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("cannot write '{}': it is a folder; expected a file path", path));
  size_t slash = path.rfind('/');
  dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty())
    fail(DLRT_INVALID_ARGUMENT, fmt::format("cannot write '{}': it names a folder", path));
  std::string temp = dir_ + "/." + base + ".tmp.XXXXXX";
  fd_ = mkstemp(temp.data());
  if (fd_ < 0)
    throw errno_error(errno,
                      fmt::format("cannot create a temp file in '{}' to write '{}'", dir_, path));
  temp_path_ = temp;
  // mkstemp makes 0600; a checkpoint should get the usual umask-based mode like fopen's.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !temp_path_.empty()) unlink(temp_path_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw errno_error(errno, fmt::format("write to '{}' failed", temp_path_));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void AtomicFileWriter::commit() {
  if (fsync(fd_) != 0) throw errno_error(errno, fmt::format("fsync of '{}' failed", temp_path_));
  int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) throw errno_error(errno, fmt::format("close of '{}' failed", temp_path_));
  if (rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw errno_error(errno, fmt::format("cannot rename '{}' to '{}'", temp_path_, path_));
  committed_ = true;
  // The rename is only durable once the folder's entry is on disk.
  int dfd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd < 0) throw errno_error(errno, fmt::format("cannot open folder '{}' to fsync", dir_));
  int rc = fsync(dfd);
  int err = errno;
  close(dfd);
  if (rc != 0) throw errno_error(err, fmt::format("fsync of folder '{}' failed", dir_));
}

}  // namespace dlrt::core::io
