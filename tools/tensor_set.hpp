// The output sets `sqdiff compare` takes besides single .npy files: a .npz
// archive (numpy.savez / savez_compressed) or a folder of NAME.npy files (as
// `sqdiff ir -o` writes), each a set of arrays named NAME.
#pragma once

#include <string>
#include <vector>

#include "npy.hpp"

namespace sqdiff::tools {

struct NamedArray {
  std::string name;
  NpyArray array;
};

// Whether `path` names a set: a directory, or a file that starts as a zip
// archive does (a .npz, whatever its name).
bool is_tensor_set(const std::string& path);

// The arrays of a .npz file or of a folder (its regular NAME.npy files,
// symbolic links followed; other entries are ignored), sorted by name
// (bytewise). Throws sqdiff::Error for an unreadable set or member, and for
// a name that occurs twice. 2-byte void members read as `two_byte_void` says
// (npy.hpp: --dtype bf16 reads them as bf16).
std::vector<NamedArray> open_tensor_set(const std::string& path, TwoByteVoid two_byte_void = TwoByteVoid::refuse);

}  // namespace sqdiff::tools
