// XNNPACK's quantized subtract (Debian's libxnnpack-dev) as an in-run peer of
// sqdiff's quantized_subtract: xnn_create_subtract_nd_qs8 (int8) and
// xnn_create_subtract_nd_qu8 (uint8), set up once for fixed shapes and
// buffers, so that a timed call is xnn_run_operator only (as xnnpack_peer.hpp).
// XNNPACK requantizes with its own rounding, not LiteRT's: its results are
// compared with sqdiff's (agreement counts), not required to match.
// This XNNPACK has no int16 subtract and no quantized squared difference.
#pragma once

#include <cstdint>
#include <memory>

#include <sqdiff/quantized.hpp>

namespace sqdiff_bench::xnnpack_quantized_peer {

class Subtract {
 public:
  // out = quantized a - b over n elements of int8 (is_signed) or uint8; b
  // has b_elements (1: broadcast from one element; 0: n). Throws
  // std::runtime_error when XNNPACK refuses the parameters.
  Subtract(bool is_signed, sqdiff::QuantParams qa, const void* a, sqdiff::QuantParams qb, const void* b,
           sqdiff::QuantParams qout, void* out, int64_t n, int threads, int64_t b_elements = 0);
  ~Subtract();
  Subtract(const Subtract&) = delete;
  Subtract& operator=(const Subtract&) = delete;
  void run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sqdiff_bench::xnnpack_quantized_peer
