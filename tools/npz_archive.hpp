// .npz files: zip archives of .npy members, as numpy.savez (members stored)
// and numpy.savez_compressed (members deflated) write them, zip64 included.
// Stored members are read in place from a read-only memory map of the file;
// deflated ones are inflated (zlib) into memory, one buffer each. Every
// member's CRC-32 is checked (as numpy.load does). Other compression methods
// and encrypted members are refused.
#pragma once

#include <string>
#include <vector>

#include "npy.hpp"

namespace sqdiff::tools {

struct NpzMember {
  std::string name;  // the member's name without ".npy", as numpy.load(...)[name] takes it
  NpyArray array;
};

// Every member, in the archive's order; 2-byte void members read as
// `two_byte_void` says (npy.hpp). Throws sqdiff::Error naming the file (and
// the member) for anything that is not a readable .npz of .npy members.
std::vector<NpzMember> read_npz(const std::string& path, TwoByteVoid two_byte_void = TwoByteVoid::refuse);

// Whether the file at `path` starts as a zip archive does ("PK\3\4", or
// "PK\5\6" for an empty one); false when it cannot be read.
bool looks_like_zip(const std::string& path);

}  // namespace sqdiff::tools
