#include "npy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace sqdiff::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// A header larger than this is not a .npy header but garbage (NumPy itself caps
// the header at 10000 bytes unless told otherwise).
constexpr std::size_t kMaxHeaderSize = std::size_t{1} << 20;

std::string errno_text(int error) { return std::strerror(error); }

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw sqdiff::Error(path + ": " + reason);
}

std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// Product of the dims, or -1 if it overflows int64 (0 if any dim is 0).
int64_t checked_count(const Shape& shape) {
  int64_t count = 1;
  bool overflow = false;
  for (const int64_t d : shape) {
    if (d == 0) return 0;
    overflow = overflow || __builtin_mul_overflow(count, d, &count);
  }
  return overflow ? -1 : count;
}

// ---------------------------------------------------------------------------
// The header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// parsed strictly enough to reject garbage and loosely enough for every writer
// (NumPy, its Python 2 "3L" longs, other libraries' double quotes).

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

class DictParser {
 public:
  DictParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header header;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') {
          bad("'descr' is not a string (structured dtypes are not supported)");
        }
        header.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        header.shape = parse_tuple();
        have_shape = true;
      } else {
        bad("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        bad("expected ',' or '}' at offset " + std::to_string(pos_));
      }
    }
    skip_space();
    if (pos_ != s_.size()) bad("trailing characters after the dict");
    if (!have_descr) bad("no 'descr' key");
    if (!have_order) bad("no 'fortran_order' key");
    if (!have_shape) bad("no 'shape' key");
    return header;
  }

 private:
  [[noreturn]] void bad(const std::string& reason) const { fail(path_, "malformed .npy header: " + reason); }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (peek() != c) bad(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }

  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string at offset " + std::to_string(pos_));
    ++pos_;
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    bad("'fortran_order' is not True or False");
  }

  Shape parse_tuple() {
    const char open = peek();
    if (open != '(' && open != '[') bad("'shape' is not a tuple");
    const char close = open == '(' ? ')' : ']';
    ++pos_;
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == close) {
        ++pos_;
        return shape;
      }
      if (peek() < '0' || peek() > '9') bad("'shape' holds something other than non-negative integers");
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, peek() - '0', &value)) {
          bad("a dimension in 'shape' does not fit in int64");
        }
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long
      shape.push_back(value);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != close) {
        bad("expected ',' or ')' in 'shape'");
      }
    }
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, std::size_t bytes) {
  uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// Element strides for C (row-major) or Fortran (column-major) order.
Shape order_strides(const Shape& shape, bool fortran) {
  Shape strides(shape.size());
  int64_t step = 1;
  if (fortran) {
    for (std::size_t i = 0; i < shape.size(); ++i) {
      strides[i] = step;
      step *= std::max<int64_t>(shape[i], 1);
    }
  } else {
    for (std::size_t i = shape.size(); i-- > 0;) {
      strides[i] = step;
      step *= std::max<int64_t>(shape[i], 1);
    }
  }
  return strides;
}

std::string describe_descr(std::string_view descr) {
  if (descr.empty()) return "an empty descr";
  const char kind = (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') && descr.size() > 1
                        ? descr[1]
                        : descr[0];
  switch (kind) {
    case 'b':
    case '?':
      return "bool";
    case 'c':
      return "complex";
    case 'U':
    case 'S':
    case 'a':
      return "string";
    case 'O':
      return "object";
    case 'V':
      return "void/raw bytes";
    case 'M':
    case 'm':
      return "datetime";
    default:
      return "unsupported";
  }
}

// ---------------------------------------------------------------------------
// Temporary files of uncommitted writers, removed if the process is
// interrupted (SIGINT, SIGTERM, SIGHUP): a fixed table, so that the signal
// handler only reads plain memory and calls unlink().

constexpr int kMaxTempFiles = 16;
constexpr std::size_t kMaxTempPath = 4096;
char g_temp_paths[kMaxTempFiles][kMaxTempPath];
std::atomic<bool> g_temp_used[kMaxTempFiles];

int register_temp(const std::string& path) {
  if (path.size() >= kMaxTempPath) return -1;
  for (int i = 0; i < kMaxTempFiles; ++i) {
    bool expected = false;
    if (g_temp_used[i].compare_exchange_strong(expected, true)) {
      // Mark the slot empty while the name is copied in.
      g_temp_paths[i][0] = '\0';
      std::atomic_signal_fence(std::memory_order_seq_cst);
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      return i;
    }
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  g_temp_paths[slot][0] = '\0';
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_temp_used[slot].store(false);
}

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

// Holds the cleanup signals back while a temporary is created and entered in
// the table: a signal delivered as open() returns would otherwise find a file
// the table does not name yet, and leave it behind.
class CleanupSignalsHeld {
 public:
  CleanupSignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (const int s : kCleanupSignals) sigaddset(&held, s);
    pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  CleanupSignalsHeld(const CleanupSignalsHeld&) = delete;
  CleanupSignalsHeld& operator=(const CleanupSignalsHeld&) = delete;
  ~CleanupSignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

 private:
  sigset_t previous_;
};

extern "C" void remove_temps_and_reraise(int signal_number) {
  for (int i = 0; i < kMaxTempFiles; ++i) {
    if (g_temp_used[i].load() && g_temp_paths[i][0] != '\0') ::unlink(g_temp_paths[i]);
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string header_for(DType dtype, const Shape& shape, std::size_t* total_header_size) {
  std::string dict = "{'descr': '" + npy_descr(dtype) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1) dict += ',';
  dict += "), }";
  // Version 1.0 has a 2-byte header length, 2.0 a 4-byte one. Pad so that the
  // data starts at a multiple of 64 bytes, as NumPy does.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  const std::size_t unpadded = prefix + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  dict.append(total - unpadded, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const std::size_t len = dict.size();
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += dict;
  *total_header_size = out.size();
  return out;
}

}  // namespace

void install_temp_file_cleanup() {
  struct sigaction action {};
  action.sa_handler = remove_temps_and_reraise;
  sigemptyset(&action.sa_mask);
  for (const int s : kCleanupSignals) {
    struct sigaction old {};
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // keep "ignored"
    sigaction(s, &action, nullptr);
  }
}

std::optional<DType> dtype_from_npy_descr(std::string_view descr) {
  if (descr.size() < 2) return std::nullopt;
  char order = '=';
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') {
    order = descr[0];
    descr.remove_prefix(1);
  }
  struct Entry {
    std::string_view code;
    DType dtype;
  };
  static constexpr Entry kTable[] = {
      {"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64}, {"i1", DType::i8},
      {"i2", DType::i16}, {"i4", DType::i32}, {"i8", DType::i64}, {"u1", DType::u8},
      {"u2", DType::u16}, {"u4", DType::u32}, {"u8", DType::u64},
  };
  for (const Entry& e : kTable) {
    if (descr != e.code) continue;
    const bool single_byte = e.code[1] == '1';
    // '=' is the native order, little-endian on every host this builds for.
    if (order == '>' && !single_byte) return std::nullopt;
    if (order == '|' && !single_byte) return std::nullopt;
    return e.dtype;
  }
  return std::nullopt;
}

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::f16: return "<f2";
    case DType::bf16: return "<u2";
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i8: return "|i1";
    case DType::i16: return "<i2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::u16: return "<u2";
    case DType::u32: return "<u4";
    case DType::u64: return "<u8";
  }
  throw sqdiff::Error("npy_descr: invalid dtype " + std::to_string(static_cast<int>(dtype)));
}

// ---------------------------------------------------------------------------
// NpyArray

NpyArray::NpyArray(NpyArray&& other) noexcept { *this = std::move(other); }

NpyArray& NpyArray::operator=(NpyArray&& other) noexcept {
  if (this != &other) {
    reset();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    strides_ = std::move(other.strides_);
    fortran_order_ = other.fortran_order_;
  }
  return *this;
}

NpyArray::~NpyArray() { reset(); }

void NpyArray::reset() noexcept {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  data_ = nullptr;
}

int64_t NpyArray::element_count() const { return checked_count(shape_); }

void NpyArray::reinterpret_as(DType dtype) {
  if (dtype_size(dtype) != dtype_size(dtype_)) {
    fail(path_, "cannot read " + std::string(dtype_name(dtype_)) + " data as " + std::string(dtype_name(dtype)) +
                    " (element sizes differ)");
  }
  dtype_ = dtype;
}

NpyArray NpyArray::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open: " + errno_text(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};

  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  const auto file_size = static_cast<std::size_t>(st.st_size);

  unsigned char prefix[12] = {};
  const ssize_t got = ::pread(fd, prefix, sizeof prefix, 0);
  if (got < 0) fail(path, "cannot read: " + errno_text(errno));
  const auto prefix_size = static_cast<std::size_t>(got);
  if (prefix_size < kMagicSize || std::memcmp(prefix, kMagic, kMagicSize) != 0) {
    fail(path, file_size == 0 ? "not a .npy file (the file is empty)"
                              : "not a .npy file (bad magic string; expected \\x93NUMPY)");
  }
  if (prefix_size < 10) fail(path, "truncated .npy file (the file ends inside the header)");
  const int major = prefix[6];
  const int minor = prefix[7];
  std::size_t len_bytes = 0;
  if (major == 1 && minor == 0) {
    len_bytes = 2;
  } else if ((major == 2 || major == 3) && minor == 0) {
    len_bytes = 4;
  } else {
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (1.0, 2.0 and 3.0 are supported)");
  }
  const std::size_t header_start = 8 + len_bytes;
  if (prefix_size < header_start) fail(path, "truncated .npy file (the file ends inside the header)");
  const std::size_t header_len = read_le(prefix + 8, len_bytes);
  if (header_len > kMaxHeaderSize) {
    fail(path, "malformed .npy header: header length " + std::to_string(header_len) + " is implausibly large");
  }
  const std::size_t data_offset = header_start + header_len;
  if (file_size < data_offset) fail(path, "truncated .npy file (the file ends inside the header)");

  std::string header_text(header_len, '\0');
  if (header_len > 0) {
    const ssize_t n = ::pread(fd, header_text.data(), header_len, static_cast<off_t>(header_start));
    if (n < 0) fail(path, "cannot read: " + errno_text(errno));
    if (static_cast<std::size_t>(n) != header_len) fail(path, "truncated .npy file (the file ends inside the header)");
  }
  for (const char c : header_text) {
    if (c == '\0') fail(path, "malformed .npy header: it contains a NUL byte");
  }
  const Header header = DictParser(header_text, path).parse();

  NpyArray array;
  array.path_ = path;
  const auto dtype = dtype_from_npy_descr(header.descr);
  if (!dtype) {
    const std::string d = header.descr;
    if (!d.empty() && d[0] == '>') {
      fail(path, "big-endian data ('" + d + "') is not supported; convert it first, e.g. in NumPy: "
                 "np.save(path, a.astype(a.dtype.newbyteorder('<')))");
    }
    if (dtype_from_npy_descr(std::string(1, '<').append(d.empty() ? "" : d.substr(1)))) {
      fail(path, "dtype descr '" + d + "' has an invalid byte-order mark for a multi-byte type");
    }
    fail(path, "unsupported dtype descr '" + d + "' (" + describe_descr(d) +
                   "); supported: f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 (little-endian)");
  }
  array.dtype_ = *dtype;
  array.shape_ = header.shape;
  array.fortran_order_ = header.fortran_order;
  const int64_t count = checked_count(header.shape);
  const std::size_t item = dtype_size(*dtype);
  int64_t data_bytes = 0;
  if (count < 0 || __builtin_mul_overflow(count, static_cast<int64_t>(item), &data_bytes)) {
    fail(path, "malformed .npy header: shape " + shape_text(header.shape) + " is too large");
  }
  const std::size_t expected = data_offset + static_cast<std::size_t>(data_bytes);
  if (file_size < expected) {
    fail(path, "truncated .npy file: shape " + shape_text(header.shape) + " of " + header.descr + " needs " +
                   std::to_string(data_bytes) + " data bytes, the file holds " +
                   std::to_string(file_size - data_offset));
  }
  if (file_size > expected) {
    fail(path, "size mismatch: shape " + shape_text(header.shape) + " of " + header.descr + " needs " +
                   std::to_string(data_bytes) + " data bytes, the file holds " +
                   std::to_string(file_size - data_offset) + " (trailing bytes)");
  }
  array.strides_ = order_strides(array.shape_, array.fortran_order_);

  if (data_bytes == 0) {
    static const std::max_align_t kNothing{};
    array.data_ = &kNothing;  // any non-null pointer: nothing is read
    return array;
  }
  void* map = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) fail(path, "cannot memory-map: " + errno_text(errno));
  array.map_ = map;
  array.map_size_ = file_size;
  if (data_offset % item == 0) {
    array.data_ = static_cast<const std::byte*>(map) + data_offset;
    ::madvise(map, file_size, MADV_SEQUENTIAL);
    return array;
  }
  // A header length that leaves the data misaligned for its type (NumPy never
  // writes one): copy the data into an aligned anonymous mapping.
  void* copy = ::mmap(nullptr, static_cast<std::size_t>(data_bytes), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED) fail(path, "cannot allocate memory for misaligned data: " + errno_text(errno));
  std::memcpy(copy, static_cast<const std::byte*>(map) + data_offset, static_cast<std::size_t>(data_bytes));
  ::munmap(map, file_size);
  array.map_ = copy;
  array.map_size_ = static_cast<std::size_t>(data_bytes);
  array.data_ = copy;
  return array;
}

// ---------------------------------------------------------------------------
// NpyWriter

NpyWriter::NpyWriter(const std::string& path, DType dtype, const Shape& shape)
    : path_(path), dtype_(dtype), shape_(shape) {
  if (!is_valid_dtype(dtype)) fail(path, "cannot write an invalid dtype");
  for (const int64_t d : shape) {
    if (d < 0) fail(path, "cannot write shape " + shape_text(shape) + ": negative dimension");
  }
  const int64_t count = checked_count(shape);
  int64_t data_bytes = 0;
  if (count < 0 || __builtin_mul_overflow(count, static_cast<int64_t>(dtype_size(dtype)), &data_bytes)) {
    fail(path, "cannot write shape " + shape_text(shape) + ": too large");
  }
  std::size_t header_size = 0;
  const std::string header = header_for(dtype, shape, &header_size);

  // A unique name next to the destination, so that rename() is atomic.
  const std::string dir = directory_of(path);
  const std::size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) fail(path, "the output path names a directory, not a file");
  {
    const CleanupSignalsHeld held;
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
    slot_ = register_temp(temp_path_);
  }
  // From here on, errors must remove the temporary: cleanup() does.
  try {
    map_size_ = header_size + static_cast<std::size_t>(data_bytes);
    // Reserve the blocks now: a full disk is a clear error here, not a SIGBUS
    // while writing through the map.
    const int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(map_size_));
    if (rc != 0) fail(path, "cannot allocate " + std::to_string(map_size_) + " bytes: " + errno_text(rc));
    void* map = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map == MAP_FAILED) fail(path, "cannot memory-map the output: " + errno_text(errno));
    map_ = map;
    std::memcpy(map_, header.data(), header.size());
    data_ = static_cast<std::byte*>(map_) + header_size;
  } catch (...) {
    cleanup();
    throw;
  }
}

TensorView NpyWriter::view() { return TensorView{data_, dtype_, shape_, {}}; }

void NpyWriter::commit() {
  if (committed_) return;
  if (fd_ < 0) fail(path_, "the output was already discarded");
  try {
    if (::msync(map_, map_size_, MS_SYNC) != 0) fail(path_, "cannot write the output: " + errno_text(errno));
    ::munmap(map_, map_size_);
    map_ = nullptr;
    if (::fsync(fd_) != 0) fail(path_, "cannot write the output: " + errno_text(errno));
    if (::close(std::exchange(fd_, -1)) != 0) fail(path_, "cannot write the output: " + errno_text(errno));
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      fail(path_, "cannot move the output into place: " + errno_text(errno));
    }
  } catch (...) {
    cleanup();
    throw;
  }
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

void NpyWriter::cleanup() noexcept {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  data_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
  unregister_temp(slot_);
  slot_ = -1;
}

NpyWriter::~NpyWriter() {
  if (!committed_) cleanup();
}

void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data) {
  NpyWriter writer(path, dtype, shape);
  const int64_t count = checked_count(shape);
  if (count > 0) std::memcpy(writer.data(), data, static_cast<std::size_t>(count) * dtype_size(dtype));
  writer.commit();
}

}  // namespace sqdiff::tools
