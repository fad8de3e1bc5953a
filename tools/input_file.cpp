#include "input_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sqdiff/error.hpp"

namespace sqdiff::tools {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw sqdiff::Error(path + ": " + reason);
}

}  // namespace

std::string describe_file_type(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    case S_IFREG: return "a regular file";
    default: return "not a regular file";
  }
}

InputFile InputFile::open(const std::string& path, const std::string& what) {
  const std::string role = what.empty() ? "" : " " + what;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open" + role + ": " + std::string(std::strerror(errno)));
  InputFile file(path, fd, 0);
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat" + role + ": " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) {
    fail(path, (what.empty() ? "is " : what + " is ") + describe_file_type(st.st_mode) + ", not a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file.size_ = static_cast<int64_t>(st.st_size);
  return file;
}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::read_all(int64_t max_bytes) const {
  if (size_ > max_bytes) {
    fail(path_, "is " + std::to_string(size_) + " bytes, more than the limit of " + std::to_string(max_bytes) +
                    " bytes for this kind of file");
  }
  std::string text(static_cast<std::size_t>(size_), '\0');
  read_at(0, size_, text.data());
  return text;
}

std::shared_ptr<const std::byte> InputFile::map() const {
  if (size_ == 0) return nullptr;
  const auto bytes = static_cast<std::size_t>(size_);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) fail(path_, std::string("cannot memory-map: ") + std::strerror(errno));
  return std::shared_ptr<const std::byte>(static_cast<const std::byte*>(map),
                                          [bytes](const std::byte* p) { ::munmap(const_cast<std::byte*>(p), bytes); });
}

void InputFile::read_at(int64_t offset, int64_t bytes, void* to) const {
  auto* out = static_cast<char*>(to);
  int64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, out + done, static_cast<std::size_t>(bytes - done), static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path_, "cannot read: " + std::string(std::strerror(errno)));
    if (n == 0) {
      fail(path_, "ends at byte " + std::to_string(offset + done) + ", before the " + std::to_string(bytes) +
                      " bytes at offset " + std::to_string(offset) + " (did it shrink?)");
    }
    done += n;
  }
}

}  // namespace sqdiff::tools
