// Opening the files the program reads (.npy inputs, IR models and weights):
// regular files only, checked before anything blocks on them or reads them
// without end (a FIFO would hang the open, /dev/zero would fill memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sqdiff::tools {

// An open, read-only descriptor of a regular file, closed on destruction.
class InputFile {
 public:
  // Throws sqdiff::Error "PATH: ..." when the path cannot be opened or is not
  // a regular file (a directory, a FIFO, a device, a socket). `what` names
  // the file's role in the message ("the model file"), if given.
  static InputFile open(const std::string& path, const std::string& what = "");

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  int fd() const { return fd_; }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // The whole file as text; throws sqdiff::Error when it is larger than
  // `max_bytes` (naming the limit) or cannot be read.
  std::string read_all(int64_t max_bytes) const;
  // `bytes` bytes at `offset` into `to`; throws sqdiff::Error when the file
  // ends before them or cannot be read.
  void read_at(int64_t offset, int64_t bytes, void* to) const;
  // The whole file, mapped read-only and shared: pages are read only where
  // something reads them, and the mapping lives as long as any owner (aliasing
  // pointers into it included). nullptr for an empty file; throws
  // sqdiff::Error naming the path when the file cannot be mapped.
  std::shared_ptr<const std::byte> map() const;

 private:
  InputFile(std::string path, int fd, int64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}

  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// "a FIFO", "a directory", "a character device", ... for messages.
std::string describe_file_type(unsigned mode);

}  // namespace sqdiff::tools
