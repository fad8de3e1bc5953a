// The .npy header, as the reader (npy_reader.cpp) and the writer
// (npy_writer.cpp) share it: the magic string, the header's dict parsed and
// written, what a descr names, the strides of each order, and the error text
// both sides give. Internal to the npy_*.cpp files: the public face is npy.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::tools::npy_header {

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr std::size_t kMagicSize = 6;

std::string errno_text(int error);

// Throws sqdiff::Error("PATH: REASON").
[[noreturn]] void fail(const std::string& path, const std::string& reason);

// "[3,4]".
std::string shape_text(const Shape& shape);

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// The header's dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
// Throws sqdiff::Error naming `path` ("malformed .npy header: ...").
Header parse_header(std::string_view text, const std::string& path);

// Element strides for C (row-major) or Fortran (column-major) order.
Shape order_strides(const Shape& shape, bool fortran);

// What kind of data a descr that dtype_from_npy_descr refuses holds ("bool",
// "complex", "string", ...), for the error that refuses it.
std::string describe_descr(std::string_view descr);

// True for the descr of 2-byte void elements in an order this host reads
// ('<', '|', '=' or none): what np.save writes for ml_dtypes.bfloat16.
bool is_two_byte_void(std::string_view descr);

// The magic string, version, header length and the padded dict of a C-order
// array: the bytes before the data, whose count is also stored in
// *total_header_size.
std::string header_for(DType dtype, const Shape& shape, std::size_t* total_header_size);

}  // namespace sqdiff::tools::npy_header
