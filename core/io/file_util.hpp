// io/file_util.hpp: the small POSIX file helpers the data-file readers and the checkpoint
// writer share. Every failure is a core::Error whose message names the path and the call
// that failed, with strerror's words.
//
//   errno_error(errno, what)  the dlrt_code for an errno (ENOENT -> NOT_FOUND, EACCES ->
//                             PERMISSION_DENIED, ENOSPC -> RESOURCE_EXHAUSTED, ...) and the
//                             message "<what>: <strerror>"
//   File                      an owned FILE* opened for reading, closed by its destructor;
//                             only regular files (a FIFO or device would block or never end)
//   AtomicFileWriter          writes a file so that readers see either the old file or the
//                             complete new one, never a partial write (temp file + fsync +
//                             rename + fsync of the folder)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <sys/types.h>

#include "status.hpp"

namespace dlrt::core::io {

// The core::Error for a failed system call: `what` ("open '/x/y'") then strerror(err).
Error errno_error(int err, const std::string& what);

// "a folder", "a FIFO (named pipe)", "a socket", ... for the file type bits of st_mode.
const char* file_kind(mode_t mode);

// A regular file opened for binary reading. NOT_FOUND with the path when it does not exist;
// INVALID_ARGUMENT naming the path and what it is when it is a folder, FIFO, socket or
// device (it is opened with O_NONBLOCK and checked by fstat first, so a FIFO never blocks).
class File {
 public:
  explicit File(const std::string& path);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  FILE* get() const { return f_; }
  const std::string& path() const { return path_; }
  // The size at open time, from fstat.
  uint64_t size() const { return size_; }
  // Reads up to n bytes; fewer only at end of file. A read error is DATA_LOSS naming the path.
  size_t read(void* dst, size_t n);

 private:
  std::string path_;
  FILE* f_ = nullptr;
  uint64_t size_ = 0;
};

// Writes `path` atomically: the bytes go to a temp file in the same folder
// (".<name>.tmp.XXXXXX", so the rename never crosses file systems), which commit() fsyncs,
// renames over `path` and follows with an fsync of the folder, so the new name is durable
// too. Until commit() succeeds `path` is untouched; the destructor of an uncommitted writer
// (an error on the way) removes the temp file.
class AtomicFileWriter {
 public:
  // Fails before creating anything when `path` is a folder (INVALID_ARGUMENT) or its folder
  // does not exist (NOT_FOUND).
  explicit AtomicFileWriter(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t n);
  void commit();

 private:
  std::string path_;
  std::string dir_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace dlrt::core::io
