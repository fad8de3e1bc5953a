// The `sqdiff run` subcommand: squared_difference or subtract on .npy files,
// or their quantized forms (SPEC 9) on int8, uint8 and int16 files.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quant_options.hpp"
#include "sqdiff/sqdiff.hpp"

namespace sqdiff::tools {

struct RunRequest {
  std::string op = "squared_difference";  // or "subtract"
  std::string a_path;
  std::string b_path;
  std::string out_path;
  sqdiff::Broadcast broadcast = {};
  int threads = 0;
  bool quiet = false;
  std::string dtype;  // "" = as stored; "bf16" reads "<u2" files as bf16 bits
  int64_t chunk_bytes = int64_t{16} << 20;  // output bytes per library call in large jobs
  // Set: the quantized op with these parameters (its broadcast and threads
  // are the request's).
  std::optional<QuantizedRun> quantized;
};

// Runs one request; throws sqdiff::Error. The output appears complete or not at all.
void run_npy(const RunRequest& request);

// Input strides aligned to the output's dims (0 where the input is broadcast),
// per the broadcast mode's alignment rule.
sqdiff::Shape aligned_strides(const sqdiff::Shape& out_shape, const sqdiff::Shape& shape,
                              const sqdiff::Shape& strides, const sqdiff::Broadcast& mode, bool is_b);

// Registers `run`, whose --reduce runs tools/reduce_run.hpp's run_reduction.
void register_run_command(CLI::App& app);

}  // namespace sqdiff::tools
