// .npy files: read through a read-only memory map, write atomically through a
// memory map (temporary name in the same directory, then rename).
//
// Supported: format versions 1.0, 2.0 and 3.0; descrs for the numeric dtypes
// ('<' or '|' byte order; '=' is taken as little-endian on this host). bf16 has
// no NumPy descr: bf16 data is stored as "<u2" and reinterpreted by the caller
// (see docs/cli.md). Big-endian ('>') files are refused with a clear error.
#pragma once
// Compiled into the static library `sqdiff_tools_common` (tools/CMakeLists.txt,
// defined before add_subdirectory(ir)); tools/CMakeLists.txt links it into sqdiff_ir.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::tools {

// A read-only memory-mapped .npy file.
struct NpyArray {
 public:
  // Throws sqdiff::Error naming the path and what is wrong.
  static NpyArray open(const std::string& path);

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
  void reset() noexcept;

  std::string path_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  const void* data_ = nullptr;
  sqdiff::DType dtype_ = sqdiff::DType::f32;
  sqdiff::Shape shape_;
  sqdiff::Shape strides_;
  bool fortran_order_ = false;
};

// Creates PATH via a temporary name in the same directory, memory-mapped.
class NpyWriter {
 public:
  NpyWriter(const std::string& path, sqdiff::DType dtype, const sqdiff::Shape& shape);  // throws sqdiff::Error
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  ~NpyWriter();  // removes the temporary if not committed

  void* data() { return data_; }
  sqdiff::TensorView view();
  // Flush, then rename into place; before commit the destination is untouched.
  void commit();
  const std::string& temp_path() const { return temp_path_; }

 private:
  void cleanup() noexcept;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  void* data_ = nullptr;
  sqdiff::DType dtype_;
  sqdiff::Shape shape_;
  bool committed_ = false;
  int slot_ = -1;  // entry in the table of temporaries removed on SIGINT/SIGTERM
};

// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE that remove the
// temporary files of uncommitted NpyWriters, then die of the same signal.
// Signals that are ignored stay ignored.
void install_temp_file_cleanup();

// Atomic: writes through NpyWriter.
void write_npy(const std::string& path, sqdiff::DType dtype, const sqdiff::Shape& shape,
               const void* data);

// "<f4", "|u1", "f8", "=i2" ... ; nullopt for anything else (big-endian included).
// bf16 has no descr, so this never returns DType::bf16.
std::optional<sqdiff::DType> dtype_from_npy_descr(std::string_view descr);
// The descr written for a dtype: "<f4" ...; bf16 is written as "<u2".
std::string npy_descr(sqdiff::DType dtype);

}  // namespace sqdiff::tools
