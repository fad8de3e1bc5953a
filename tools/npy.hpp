// .npy files: read through a read-only memory map; written atomically through
// a memory map (temporary name in the same directory, then rename), or
// written through to a pipe or device.
//
// Supported: format versions 1.0, 2.0 and 3.0; descrs for the numeric dtypes
// ('<' or '|' byte order; '=' is taken as little-endian on this host). bf16 has
// no NumPy descr: bf16 data is stored as "<u2" and reinterpreted by the caller,
// or, as np.save writes an ml_dtypes.bfloat16 array, as 2-byte voids ("<V2"),
// read as bf16 when the caller says so (TwoByteVoid; see docs/cli.md).
// Big-endian ('>') files are refused with a clear error.
#pragma once
// Compiled into the static library `sqdiff_tools_common` (tools/CMakeLists.txt,
// defined before add_subdirectory(ir)); tools/CMakeLists.txt links it into sqdiff_ir.
// Reading is in npy_reader.cpp, writing in npy_writer.cpp, and the header they
// share in npy_header.*.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatal_signals.hpp"
#include "output_target.hpp"

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::tools {

// What the reader makes of a descr of 2-byte void elements ('<V2', '|V2',
// '=V2'): np.save writes it for an ml_dtypes.bfloat16 array, a dtype NumPy's
// descrs cannot name. The file does not say what the two bytes hold, so only
// the caller can: `--dtype bf16` reads them as bf16 bits (little-endian, as
// ml_dtypes stores them on this host). A void of any other size, or one the
// caller did not ask for, stays an error (which says to pass --dtype bf16).
enum class TwoByteVoid { refuse, bf16 };

// A read-only memory-mapped .npy file.
struct NpyArray {
 public:
  // Throws sqdiff::Error naming the path and what is wrong.
  static NpyArray open(const std::string& path, TwoByteVoid two_byte_void = TwoByteVoid::refuse);
  // An array from the bytes of a .npy file held in memory (a member of a .npz
  // archive), checked as open() checks a file; `name` stands for the path in
  // errors. `owner` keeps the bytes alive (data misaligned for its type is
  // copied). Throws sqdiff::Error.
  static NpyArray from_bytes(const std::string& name, const std::byte* bytes, std::size_t size,
                             std::shared_ptr<const void> owner, TwoByteVoid two_byte_void = TwoByteVoid::refuse);

  NpyArray(NpyArray&& other) noexcept;
  NpyArray& operator=(NpyArray&& other) noexcept;
  NpyArray(const NpyArray&) = delete;
  NpyArray& operator=(const NpyArray&) = delete;
  ~NpyArray();

  sqdiff::DType dtype() const { return dtype_; }
  const sqdiff::Shape& shape() const { return shape_; }
  // In elements: row-major, or column-major for fortran_order.
  const sqdiff::Shape& strides() const { return strides_; }
  bool fortran_order() const { return fortran_order_; }
  const void* data() const { return data_; }
  sqdiff::ConstTensorView view() const { return {data_, dtype_, shape_, strides_}; }
  int64_t element_count() const;
  const std::string& path() const { return path_; }
  // Reinterprets the data as another dtype of the same element size (u2 -> bf16).
  // Throws sqdiff::Error when the sizes differ.
  void reinterpret_as(sqdiff::DType dtype);

 private:
  NpyArray() = default;
  // An array described by a header, its data not yet attached; strides from the order.
  NpyArray(std::string path, sqdiff::DType dtype, sqdiff::Shape shape, bool fortran_order);
  void reset() noexcept;

  std::string path_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  MappedInput mapped_;  // a SIGBUS in the map: the file shrank under us
  const void* data_ = nullptr;
  sqdiff::DType dtype_ = sqdiff::DType::f32;
  sqdiff::Shape shape_;
  sqdiff::Shape strides_;
  bool fortran_order_ = false;
  std::shared_ptr<const void> owner_;  // from_bytes: what holds the bytes
};

// Writes a .npy file. To a regular file (new or existing, symbolic links
// followed) through a memory map of a temporary beside it, renamed onto it at
// commit: the file appears complete or not at all, and a replaced file keeps
// its mode. To anything else ("-" for standard output, a pipe, a device) the
// bytes are written through in order (output_target.hpp).
class NpyWriter {
 public:
  NpyWriter(const std::string& path, sqdiff::DType dtype, const sqdiff::Shape& shape);  // throws sqdiff::Error
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  ~NpyWriter();  // removes the temporary if not committed

  int64_t data_bytes() const { return data_bytes_; }
  // Where to put the data bytes [offset, offset + bytes): regions are asked
  // for in order, each starting where the last ended, and filled before the
  // next one is asked for (a written-through target sends each one on then).
  void* region(int64_t offset, int64_t bytes);
  // Flushes, then renames into place (or sends the last region); before
  // commit a replaced file is untouched.
  void commit();
  bool writes_through() const { return target_.kind == OutputTarget::Kind::write_through; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  void create_temporary(std::size_t file_size);
  void send(const void* bytes, std::size_t size);
  void send_pending();
  void cleanup() noexcept;

  OutputTarget target_;
  std::string header_;
  int64_t data_bytes_ = 0;
  int64_t next_offset_ = 0;  // the data bytes handed out so far
  // replace_file
  std::string temp_path_;
  TemporaryPath temp_registration_;
  int fd_ = -1;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::byte* data_ = nullptr;
  // write_through: the region not yet sent, and whether the header went out
  std::vector<std::byte> pending_;
  bool header_sent_ = false;
  bool committed_ = false;
};

// NumPy reads arrays of at most this many dims (NPY_MAXDIMS of NumPy 2; 32
// in NumPy 1.x); the reader and the writer refuse more.
inline constexpr std::size_t kMaxNpyRank = 64;

// Atomic: writes through NpyWriter.
void write_npy(const std::string& path, sqdiff::DType dtype, const sqdiff::Shape& shape,
               const void* data);

// "<f4", "|u1", "f8", "=i2" ... ; nullopt for anything else (big-endian included).
// bf16 has no descr, so this never returns DType::bf16.
std::optional<sqdiff::DType> dtype_from_npy_descr(std::string_view descr);
// The descr written for a dtype: "<f4" ...; bf16 is written as "<u2".
std::string npy_descr(sqdiff::DType dtype);

}  // namespace sqdiff::tools
