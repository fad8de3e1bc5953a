// Fuzzes the .npz reader (tools/npz_archive.*, tools/tensor_set.*): the zip
// records (end of central directory, zip64 end record and locator, central
// and local headers, the zip64 extra field), stored and deflated members
// (zlib; the CRC-32 computed, a mismatch let through in this build so that
// mutated members reach the .npy reader), and each member read as a .npy array.
//
// Each input is written to one memfd (reused for every input) and read as
// `sqdiff compare` reads a set: is_tensor_set, then open_tensor_set (which
// calls read_npz) on /proc/self/fd/N. open_tensor_set is called whatever
// is_tensor_set says, so that archives whose first bytes are not "PK" (the
// reader goes by the end record) are fuzzed too. Checks, for every input:
// - nothing but sqdiff::Error escapes;
// - the arrays come sorted by name, each name once;
// - each array is consistent: no negative dim, the element count counted as
//   NumPy counts it, the dense C or Fortran strides (computed here in 128-bit
//   arithmetic), and every data byte readable (ASan sees a bad read of an
//   inflated member; a stored one lies in the file's map);
// - what the archive costs in memory is bounded by its size: the arrays'
//   bytes together are at most what deflate can expand the whole file to
//   (1032 output bytes per input byte), so neither a forged size nor members
//   sharing their bytes can make the reader hold more. (libFuzzer's
//   -malloc_limit_mb, scripts/fuzz.sh, stops a single larger allocation.)

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "memory_file.hpp"
#include "npy.hpp"
#include "npy_layout_check.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"
#include "tensor_set.hpp"

using sqdiff_fuzz::array_text;
using sqdiff_fuzz::check;
using sqdiff_fuzz::check_npy_layout;
using sqdiff_fuzz::fail;

namespace {

// Deflate's largest expansion: a 258-byte match coded in 2 bits.
constexpr __int128 kDeflateMaxRatio = 1032;

sqdiff_fuzz::MemoryFile& input() {
  static sqdiff_fuzz::MemoryFile file("fuzz_npz_input");
  return file;
}

// Checks one accepted array; returns how many data bytes it holds.
__int128 check_array(const sqdiff::tools::NamedArray& named) {
  const sqdiff::tools::NpyArray& array = named.array;
  const std::string what = "member " + named.name + ": accepted " + array_text(array);
  const int64_t count = check_npy_layout(array, what);
  if (count == 0) return 0;
  const auto item = static_cast<__int128>(sqdiff::dtype_size(array.dtype()));
  // Dense: the data is count * item contiguous bytes; read every one.
  const __int128 bytes = count * item;
  const auto* base = static_cast<const unsigned char*>(array.data());
  volatile unsigned char sink = 0;
  for (__int128 i = 0; i < bytes; ++i) sink = static_cast<unsigned char>(sink ^ base[static_cast<std::size_t>(i)]);
  (void)sink;
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  input().write(data, size);
  const std::string& path = input().path();
  std::vector<sqdiff::tools::NamedArray> arrays;
  try {
    (void)sqdiff::tools::is_tensor_set(path);
    arrays = sqdiff::tools::open_tensor_set(path);
  } catch (const sqdiff::Error&) {
    return 0;
  } catch (const std::exception& e) {
    fail(std::string("open_tensor_set threw something other than sqdiff::Error: ") + e.what());
  }
  __int128 total = 0;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (i > 0) check(arrays[i - 1].name < arrays[i].name, "names not sorted or repeated: " + arrays[i].name);
    total += check_array(arrays[i]);
  }
  check(total <= kDeflateMaxRatio * static_cast<__int128>(size),
        "the arrays hold " + std::to_string(static_cast<int64_t>(total)) + " bytes, more than deflate can expand " +
            std::to_string(size) + " bytes to");
  return 0;
}
