// The two .npy inputs of `run` and `compare`: opened through read-only memory
// maps, read as the --dtype the user asked for, required to share one dtype,
// and broadcast under the chosen mode, with errors that name the subcommand.
#pragma once

#include <string>
#include <vector>

#include "npy.hpp"
#include "sqdiff/broadcast.hpp"

namespace sqdiff::tools {

struct InputPair {
  NpyArray a;
  NpyArray b;
  sqdiff::Shape shape;      // the broadcast shape
  sqdiff::Shape a_strides;  // in elements, aligned to `shape` (0 where a is broadcast)
  sqdiff::Shape b_strides;
};

// Throws sqdiff::Error: a file that cannot be read, an unknown or unsuitable
// --dtype (bf16 reads "<u2" and "<V2" files), mixed dtypes ("`what`: mixed dtypes: ..."), shapes that do not
// broadcast ("`what`: cannot broadcast ...").
InputPair open_input_pair(const std::string& a_path, const std::string& b_path, const std::string& dtype,
                          const sqdiff::Broadcast& mode, const std::string& what);

// The same for two arrays already open (members of .npz files or folders).
InputPair align_input_pair(NpyArray a, NpyArray b, const std::string& dtype, const sqdiff::Broadcast& mode,
                           const std::string& what);

// Applies --dtype: "" or the stored dtype keep the data as stored; "bf16"
// (alias "bfloat16") reads a u16 ("<u2") file as bf16 bits. Throws sqdiff::Error otherwise.
void apply_dtype(NpyArray& array, const std::string& name);

// How files are opened for --dtype `name`: "bf16" (alias "bfloat16") reads
// 2-byte void elements (np.save of ml_dtypes.bfloat16, "<V2") as bf16 bits;
// any other name leaves them refused, with the error that names --dtype bf16.
TwoByteVoid two_byte_void_for(const std::string& name);

// The names --dtype takes: every dtype's name and the alias bfloat16.
std::vector<std::string> dtype_names();

}  // namespace sqdiff::tools
