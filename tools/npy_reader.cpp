// Reading .npy files (NpyArray, npy.hpp): a file memory-mapped read-only, or
// the bytes of a .npz member, checked against its header.
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "input_file.hpp"
#include "npy.hpp"
#include "npy_header.hpp"
#include "shape_count.hpp"

namespace sqdiff::tools {

using npy_header::describe_descr;
using npy_header::errno_text;
using npy_header::fail;
using npy_header::Header;
using npy_header::is_two_byte_void;
using npy_header::kMagic;
using npy_header::kMagicSize;
using npy_header::order_strides;
using npy_header::parse_header;
using npy_header::shape_text;

NpyArray::NpyArray(std::string path, sqdiff::DType dtype, sqdiff::Shape shape, bool fortran_order)
    : path_(std::move(path)),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(order_strides(shape_, fortran_order)),
      fortran_order_(fortran_order) {}

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

// A header larger than this is not a .npy header but garbage (NumPy itself caps
// the header at 10000 bytes unless told otherwise).
constexpr std::size_t kMaxHeaderSize = std::size_t{1} << 20;

uint32_t read_le(const unsigned char* p, std::size_t bytes) {
  uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

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
  const Header header = parse_header(header_text, path);

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
  NpyArray array(path, layout.dtype, layout.shape, layout.fortran_order);

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
  NpyArray array(name, layout.dtype, layout.shape, layout.fortran_order);
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

}  // namespace sqdiff::tools
