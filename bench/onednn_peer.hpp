// oneDNN (Debian's libdnnl-dev, 2.6, OpenMP runtime) as an in-run peer.
//
// out = (a - b)^2 is one binary primitive, algorithm binary_sub with an
// eltwise_square post-op, so the difference is squared in registers before
// the store; a - b is binary_sub alone. Each case creates its primitive once
// (engine CPU, one stream) and binds the buffers once, so a timed call is
// primitive::execute. oneDNN's CPU build here threads with OpenMP (libgomp):
// the thread count is the calling thread's omp_set_num_threads, set to the
// case's 1 or 2 before creating and before every call.
//
// oneDNN's binary broadcasts src1 only (src0 has the output's shape): for a
// squared difference with a broadcast a and a full b the operands are
// swapped ((b - a)^2 is exactly (a - b)^2); shapes it cannot do (both sides
// broadcast) throw std::runtime_error, and the case reports the peer skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sqdiff_bench::onednn_peer {

enum class Op { subtract, squared_difference };

class Operator {
 public:
  Operator(Op op, const std::vector<int64_t>& a_shape, const float* a, const std::vector<int64_t>& b_shape,
           const float* b, float* out, int threads);
  ~Operator();
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;
  void run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string note(int threads);  // "binary_sub+square" or "binary_sub+square+omp2"
std::string version();

}  // namespace sqdiff_bench::onednn_peer
