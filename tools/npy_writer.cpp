// Writing .npy files (NpyWriter and write_npy, npy.hpp): atomically through a
// memory-mapped temporary renamed into place, or written through in order.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "npy.hpp"
#include "npy_header.hpp"
#include "shape_count.hpp"

namespace sqdiff::tools {

using npy_header::errno_text;
using npy_header::fail;
using npy_header::header_for;
using npy_header::shape_text;

namespace {

// strerror, plus the limit when a file-size limit (`ulimit -f`, SIGXFSZ
// ignored) refused the write.
std::string write_error_text(int error) {
  std::string text = errno_text(error);
  struct rlimit limit {};
  if (error == EFBIG && ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    text += " (the file-size limit, ulimit -f, is " + std::to_string(limit.rlim_cur) + " bytes)";
  }
  return text;
}

}  // namespace

NpyWriter::NpyWriter(const std::string& path, DType dtype, const Shape& shape) {
  if (!is_valid_dtype(dtype)) fail(path, "cannot write an invalid dtype");
  for (const int64_t d : shape) {
    if (d < 0) fail(path, "cannot write shape " + shape_text(shape) + ": negative dimension");
  }
  if (shape.size() > kMaxNpyRank) {
    fail(path, "cannot write shape " + shape_text(shape) + ": NumPy reads at most " + std::to_string(kMaxNpyRank) +
                   " dims");
  }
  const std::optional<int64_t> bytes = byte_count(shape, dtype_size(dtype));
  if (!bytes) fail(path, "cannot write shape " + shape_text(shape) + ": too large");
  data_bytes_ = *bytes;
  std::size_t header_size = 0;
  header_ = header_for(dtype, shape, &header_size);
  target_ = resolve_output_target(path);
  if (!writes_through()) create_temporary(header_size + static_cast<std::size_t>(data_bytes_));
}

void NpyWriter::create_temporary(std::size_t file_size) {
  const std::string& path = target_.path;
  // A unique name next to the file, so that rename() is atomic. The file's
  // own name is cut short in it, so that a legal 255-byte name still leaves
  // room for the suffix.
  const std::string dir = directory_of(target_.file);
  const std::size_t slash = target_.file.rfind('/');
  const std::string base = (slash == std::string::npos ? target_.file : target_.file.substr(slash + 1)).substr(0, 160);
  {
    const FatalSignalsHeld held;
    static std::atomic<unsigned> counter{0};
    const auto seed = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      const unsigned long long suffix = (seed + static_cast<unsigned long long>(counter++) * 7919) % 1000000;
      const std::string candidate = (dir == "/" ? "" : dir) + "/." + base + ".tmp-" + std::to_string(::getpid()) +
                                    "-" + std::to_string(suffix);
      const int fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = fd;
        temp_path_ = candidate;
      } else if (errno != EEXIST) {
        fail(path, "cannot create the output file in directory " + dir + ": " + errno_text(errno));
      }
    }
    if (fd_ < 0) fail(path, "cannot create a unique temporary file in directory " + dir);
    temp_registration_ = TemporaryPath(temp_path_);
  }
  // From here on, errors must remove the temporary: cleanup() does.
  try {
    // A replaced file keeps its permissions (a private 0600 output stays
    // private) and, where we may, its owner.
    if (target_.existing_mode) {
      if (::fchmod(fd_, *target_.existing_mode) != 0) {
        fail(path, "cannot give the new file the mode of the one it replaces: " + errno_text(errno));
      }
      if (::geteuid() == 0) (void)::fchown(fd_, target_.existing_uid, target_.existing_gid);
    }
    map_size_ = file_size;
    // Reserve the blocks now: a full disk is a clear error here, not a SIGBUS
    // while writing through the map.
    const int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(map_size_));
    if (rc != 0) fail(path, "cannot allocate " + std::to_string(map_size_) + " bytes: " + write_error_text(rc));
    void* map = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map == MAP_FAILED) fail(path, "cannot memory-map the output: " + errno_text(errno));
    map_ = map;
    std::memcpy(map_, header_.data(), header_.size());
    data_ = static_cast<std::byte*>(map_) + header_.size();
  } catch (...) {
    cleanup();
    throw;
  }
}

void* NpyWriter::region(int64_t offset, int64_t bytes) {
  if (committed_ || offset != next_offset_ || bytes < 0 || bytes > data_bytes_ - offset) {
    fail(target_.path, "internal error: output region [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                           ") out of order (next " + std::to_string(next_offset_) + " of " +
                           std::to_string(data_bytes_) + ")");
  }
  next_offset_ = offset + bytes;
  if (!writes_through()) return data_ + offset;
  send_pending();
  pending_.resize(static_cast<std::size_t>(bytes));
  return pending_.data();
}

void NpyWriter::send(const void* bytes, std::size_t size) {
  const auto* p = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::write(target_.fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(target_.path, "cannot write the output: " + write_error_text(n < 0 ? errno : EIO));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void NpyWriter::send_pending() {
  if (!header_sent_) {
    send(header_.data(), header_.size());
    header_sent_ = true;
  }
  send(pending_.data(), pending_.size());
  pending_.clear();
}

void NpyWriter::commit() {
  if (committed_) return;
  if (next_offset_ != data_bytes_) {
    fail(target_.path, "internal error: only " + std::to_string(next_offset_) + " of " +
                           std::to_string(data_bytes_) + " output bytes were written");
  }
  if (writes_through()) {
    send_pending();
    committed_ = true;
    return;
  }
  if (fd_ < 0) fail(target_.path, "the output was already discarded");
  try {
    if (::msync(map_, map_size_, MS_SYNC) != 0) fail(target_.path, "cannot write the output: " + errno_text(errno));
    ::munmap(map_, map_size_);
    map_ = nullptr;
    if (::fsync(fd_) != 0) fail(target_.path, "cannot write the output: " + write_error_text(errno));
    if (::close(std::exchange(fd_, -1)) != 0) fail(target_.path, "cannot write the output: " + errno_text(errno));
    if (::rename(temp_path_.c_str(), target_.file.c_str()) != 0) {
      fail(target_.path, "cannot move the output into place: " + errno_text(errno));
    }
  } catch (...) {
    cleanup();
    throw;
  }
  committed_ = true;
  temp_registration_ = TemporaryPath();
}

void NpyWriter::cleanup() noexcept {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  data_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
  temp_registration_ = TemporaryPath();
}

NpyWriter::~NpyWriter() {
  if (!committed_) cleanup();
  if (target_.owns_fd) ::close(target_.fd);
}

void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data) {
  NpyWriter writer(path, dtype, shape);
  void* to = writer.region(0, writer.data_bytes());
  if (writer.data_bytes() > 0) std::memcpy(to, data, static_cast<std::size_t>(writer.data_bytes()));
  writer.commit();
}

}  // namespace sqdiff::tools
