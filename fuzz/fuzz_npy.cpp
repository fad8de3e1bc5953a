// Fuzzes the .npy reader (tools/npy.*): header parsing and data mapping.
//
// The reader opens paths, so each input is written to one memfd (a file in
// memory, reused for every input) and opened as /proc/self/fd/N: no disk churn.
// Checks, for every input:
// - NpyArray::open returns or throws sqdiff::Error (nothing else escapes);
// - an accepted array is consistent: no negative dim, the element count
//   counted as NumPy counts it, strides that are the dense C or Fortran ones
//   (computed here independently, in 128-bit arithmetic), every element inside
//   the file's data bytes, and every element readable (ASan sees a bad read);
// - round trip: an accepted array of at most 64 KiB written with write_npy
//   (to a reused file in /dev/shm) reads back with the same dtype, shape and
//   elements (Fortran-order data compared element by element).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "memory_file.hpp"
#include "npy.hpp"
#include "npy_layout_check.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"

using sqdiff_fuzz::array_text;
using sqdiff_fuzz::check;
using sqdiff_fuzz::check_npy_layout;
using sqdiff_fuzz::fail;
using sqdiff_fuzz::shape_text;

namespace {

constexpr int64_t kRoundTripLimit = int64_t{64} << 10;

// The fuzzer's input, and the round trip's file in a private directory in
// /dev/shm (or $TMPDIR).
struct Files {
  sqdiff_fuzz::MemoryFile input{"fuzz_npy_input"};
  std::string output_dir;
  std::string output_path;

  Files() {
    const char* base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    std::string pattern = std::string(base) + "/fuzz_npy.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) fail("mkdtemp failed in " + std::string(base));
    output_dir = pattern;
    output_path = output_dir + "/round_trip.npy";
  }
  ~Files() {
    ::unlink(output_path.c_str());
    ::rmdir(output_dir.c_str());
  }
};

Files& files() {
  static Files f;
  return f;
}

// Checks an accepted array; returns its elements in row-major order (only
// when it is small enough for the round trip).
std::vector<unsigned char> check_array(const sqdiff::tools::NpyArray& array, std::size_t file_size) {
  const sqdiff::Shape& shape = array.shape();
  const sqdiff::Shape& strides = array.strides();
  const std::string what = "accepted " + array_text(array);
  const int64_t count = check_npy_layout(array, what);
  if (count == 0) return {};
  const auto item = static_cast<int64_t>(sqdiff::dtype_size(array.dtype()));
  check(static_cast<std::size_t>(count * item) <= file_size, what + ": more data than the file holds");

  // Every element, in row-major order, through the strides.
  const bool keep = count * item <= kRoundTripLimit;
  std::vector<unsigned char> elements;
  if (keep) elements.reserve(static_cast<std::size_t>(count * item));
  std::vector<int64_t> index(shape.size(), 0);
  const auto* base = static_cast<const unsigned char*>(array.data());
  volatile unsigned char sink = 0;
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) offset += index[i] * strides[i];
    check(offset >= 0 && offset < count, what + ": an element outside the data");
    const unsigned char* element = base + offset * static_cast<int64_t>(item);
    if (keep) {
      elements.insert(elements.end(), element, element + static_cast<std::size_t>(item));
    } else {
      sink = static_cast<unsigned char>(sink ^ element[0] ^ element[static_cast<std::size_t>(item) - 1]);
    }
    for (std::size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  (void)sink;
  return elements;
}

void round_trip(const sqdiff::tools::NpyArray& array, const std::vector<unsigned char>& elements) {
  const std::string& path = files().output_path;
  const std::string what = "round trip of " + array_text(array);
  try {
    sqdiff::tools::write_npy(path, array.dtype(), array.shape(), elements.empty() ? nullptr : elements.data());
  } catch (const sqdiff::Error& e) {
    fail(what + ": write_npy refused what open accepted: " + e.what());
  }
  try {
    const sqdiff::tools::NpyArray again = sqdiff::tools::NpyArray::open(path);
    check(again.dtype() == array.dtype(), what + ": the dtype changed");
    check(again.shape() == array.shape(), what + ": the shape changed to " + shape_text(again.shape()));
    check(!again.fortran_order(), what + ": written in Fortran order");
    if (!elements.empty()) {
      check(std::memcmp(again.data(), elements.data(), elements.size()) == 0, what + ": the data changed");
    }
  } catch (const sqdiff::Error& e) {
    fail(what + ": the written file does not open: " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  files().input.write(data, size);
  std::optional<sqdiff::tools::NpyArray> array;
  try {
    array.emplace(sqdiff::tools::NpyArray::open(files().input.path()));
  } catch (const sqdiff::Error&) {
    return 0;
  }
  const std::vector<unsigned char> elements = check_array(*array, size);
  // descr <-> dtype is a bijection on the types with a descr.
  const auto descr = sqdiff::tools::npy_descr(array->dtype());
  check(sqdiff::tools::dtype_from_npy_descr(descr) == array->dtype(), "descr " + descr + " does not map back");
  const auto item = static_cast<int64_t>(sqdiff::dtype_size(array->dtype()));
  if (array->element_count() * item <= kRoundTripLimit) round_trip(*array, elements);
  return 0;
}
