#include "npy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "input_file.hpp"
#include "shape_count.hpp"

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

  // NumPy requires a tuple: a list, and "(3)" (an int in parentheses: a
  // one-element tuple is written "(3,)"), are refused, as np.load refuses them.
  Shape parse_tuple() {
    if (peek() != '(') bad("'shape' is not a tuple");
    const char close = ')';
    ++pos_;
    Shape shape;
    bool comma_after_last = false;
    while (true) {
      skip_space();
      if (peek() == close) {
        if (shape.size() == 1 && !comma_after_last) bad("'shape' is an int in parentheses, not a tuple (write (N,))");
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
      if (shape.size() > kMaxNpyRank) {
        bad("'shape' has more than " + std::to_string(kMaxNpyRank) + " dims, which NumPy cannot read");
      }
      skip_space();
      comma_after_last = peek() == ',';
      if (comma_after_last) {
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

// True for the descr of 2-byte void elements in an order this host reads
// ('<', '|', '=' or none): what np.save writes for ml_dtypes.bfloat16.
bool is_two_byte_void(std::string_view descr) {
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')) descr.remove_prefix(1);
  return descr == "V2";
}

}  // namespace

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
    mapped_ = std::move(other.mapped_);
    data_ = std::exchange(other.data_, nullptr);
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    strides_ = std::move(other.strides_);
    fortran_order_ = other.fortran_order_;
    owner_ = std::move(other.owner_);
  }
  return *this;
}

NpyArray::~NpyArray() { reset(); }

void NpyArray::reset() noexcept {
  mapped_ = MappedInput();
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  data_ = nullptr;
  owner_.reset();
}

int64_t NpyArray::element_count() const { return tools::element_count(shape_).value_or(-1); }

void NpyArray::reinterpret_as(DType dtype) {
  if (dtype_size(dtype) != dtype_size(dtype_)) {
    fail(path_, "cannot read " + std::string(dtype_name(dtype_)) + " data as " + std::string(dtype_name(dtype)) +
                    " (element sizes differ)");
  }
  dtype_ = dtype;
}

namespace {

struct NpyLayout {
  DType dtype = DType::f32;
  Shape shape;
  bool fortran_order = false;
  std::size_t data_offset = 0;
  int64_t data_bytes = 0;
};

// The header of a .npy file of `file_size` bytes, read through `read_at`
// (which reads up to `size` bytes at `offset` and returns how many, or -1
// with errno set), checked against the size: what open() and from_bytes()
// share.
template <typename ReadAt>
NpyLayout read_layout(const std::string& path, std::size_t file_size, TwoByteVoid two_byte_void, ReadAt read_at) {
  unsigned char prefix[12] = {};
  const ssize_t got = read_at(prefix, sizeof prefix, 0);
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
    const ssize_t n = read_at(header_text.data(), header_len, header_start);
    if (n < 0) fail(path, "cannot read: " + errno_text(errno));
    if (static_cast<std::size_t>(n) != header_len) fail(path, "truncated .npy file (the file ends inside the header)");
  }
  for (const char c : header_text) {
    if (c == '\0') fail(path, "malformed .npy header: it contains a NUL byte");
  }
  const Header header = DictParser(header_text, path).parse();

  NpyLayout layout;
  std::optional<DType> dtype = dtype_from_npy_descr(header.descr);
  if (!dtype && two_byte_void == TwoByteVoid::bf16 && is_two_byte_void(header.descr)) dtype = DType::bf16;
  if (!dtype) {
    const std::string d = header.descr;
    if (!d.empty() && d[0] == '>') {
      fail(path, "big-endian data ('" + d + "') is not supported; convert it first, e.g. in NumPy: "
                 "np.save(path, a.astype(a.dtype.newbyteorder('<')))");
    }
    if (dtype_from_npy_descr(std::string(1, '<').append(d.empty() ? "" : d.substr(1)))) {
      fail(path, "dtype descr '" + d + "' has an invalid byte-order mark for a multi-byte type");
    }
    // ml_dtypes.bfloat16 arrays (JAX, TensorFlow, ONNX tooling) save as '<V2', two raw bytes with no
    // mark of what they hold: the likely meaning gets the option that reads them (the commands that
    // take --dtype open such files with TwoByteVoid::bf16 when it is bf16).
    const std::string bf16_hint =
        is_two_byte_void(d)
            ? "; if these are bfloat16 values (np.save of an ml_dtypes.bfloat16 array writes '" + d +
                  "'), pass --dtype bf16 to sqdiff run or sqdiff compare, which reads them as bf16 bits"
            : "";
    fail(path, "unsupported dtype descr '" + d + "' (" + describe_descr(d) +
                   "); supported: f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 (little-endian)" + bf16_hint);
  }
  layout.dtype = *dtype;
  layout.shape = header.shape;
  layout.fortran_order = header.fortran_order;
  const std::size_t item = dtype_size(*dtype);
  const std::optional<int64_t> byte_total = byte_count(header.shape, item);
  if (!byte_total) fail(path, "malformed .npy header: shape " + shape_text(header.shape) + " is too large");
  const int64_t data_bytes = *byte_total;
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
  layout.data_offset = data_offset;
  layout.data_bytes = data_bytes;
  return layout;
}

}  // namespace

NpyArray NpyArray::open(const std::string& path, TwoByteVoid two_byte_void) {
  const InputFile file = InputFile::open(path);
  const int fd = file.fd();
  const auto file_size = static_cast<std::size_t>(file.size());
  const NpyLayout layout =
      read_layout(path, file_size, two_byte_void, [fd](void* out, std::size_t size, std::size_t offset) {
        return ::pread(fd, out, size, static_cast<off_t>(offset));
      });
  const std::size_t data_offset = layout.data_offset;
  const int64_t data_bytes = layout.data_bytes;
  const std::size_t item = dtype_size(layout.dtype);
  NpyArray array;
  array.path_ = path;
  array.dtype_ = layout.dtype;
  array.shape_ = layout.shape;
  array.fortran_order_ = layout.fortran_order;
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
  array.mapped_ = MappedInput(map, file_size, path);
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
  array.mapped_ = MappedInput();
  ::munmap(map, file_size);
  array.map_ = copy;
  array.map_size_ = static_cast<std::size_t>(data_bytes);
  array.data_ = copy;
  return array;
}

NpyArray NpyArray::from_bytes(const std::string& name, const std::byte* bytes, std::size_t size,
                              std::shared_ptr<const void> owner, TwoByteVoid two_byte_void) {
  const NpyLayout layout =
      read_layout(name, size, two_byte_void, [bytes, size](void* out, std::size_t count, std::size_t offset) {
        const std::size_t n = offset >= size ? 0 : std::min(count, size - offset);
        if (n > 0) std::memcpy(out, bytes + offset, n);
        return static_cast<ssize_t>(n);
      });
  NpyArray array;
  array.path_ = name;
  array.dtype_ = layout.dtype;
  array.shape_ = layout.shape;
  array.fortran_order_ = layout.fortran_order;
  array.strides_ = order_strides(array.shape_, array.fortran_order_);
  const std::size_t item = dtype_size(layout.dtype);
  const std::byte* data = bytes + layout.data_offset;
  if (layout.data_bytes == 0) {
    static const std::max_align_t kNothing{};
    array.data_ = &kNothing;  // any non-null pointer: nothing is read
    return array;
  }
  if (reinterpret_cast<std::uintptr_t>(data) % item == 0) {
    array.owner_ = std::move(owner);
    array.data_ = data;
    return array;
  }
  // Data misaligned for its type (a stored .npz member starts wherever its
  // name ends): copied into aligned memory.
  const auto count = static_cast<std::size_t>(layout.data_bytes);
  std::shared_ptr<std::max_align_t[]> copy(new std::max_align_t[(count + sizeof(std::max_align_t) - 1) /
                                                                sizeof(std::max_align_t)]);
  std::memcpy(copy.get(), data, count);
  array.data_ = copy.get();
  array.owner_ = std::move(copy);
  return array;
}

// ---------------------------------------------------------------------------
// NpyWriter

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
