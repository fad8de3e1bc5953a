// XNNPACK (Debian's libxnnpack-dev, a 2022-02 snapshot) as an in-run peer.
//
// Its f32 operators xnn_create_squared_difference_nd_f32 and
// xnn_create_subtract_nd_f32 (NumPy broadcasting, up to 6 dims): each case
// creates its operator and sets it up once (shapes, pointers, pool), as a
// runtime with fixed tensors does, so a timed call is xnn_run_operator only.
// 2 threads run on a pthreadpool of 2 (the caller and one worker); 1 thread
// passes no pool, so the operator runs inline on the caller. This XNNPACK
// version has no f16 subtract or squared difference, so the peer is f32 only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sqdiff_bench::xnnpack_peer {

enum class Op { subtract, squared_difference };

// One operator set up for fixed shapes and buffers; run() computes
// out = a - b or (a - b)^2 with NumPy broadcasting. Shapes are row-major
// dims (an empty shape is a scalar); throws std::runtime_error when XNNPACK
// refuses the shapes.
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

std::string note(int threads);  // "op" or "op+pthreadpool2"
std::string version();

}  // namespace sqdiff_bench::xnnpack_peer
