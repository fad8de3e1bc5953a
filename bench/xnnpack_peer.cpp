#include "xnnpack_peer.hpp"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstddef>
#include <limits>
#include <stdexcept>

namespace sqdiff_bench::xnnpack_peer {
namespace {

void check(xnn_status status, const char* what) {
  if (status != xnn_status_success) {
    throw std::runtime_error(std::string("xnnpack_peer: ") + what + " failed with status " +
                             std::to_string(static_cast<int>(status)));
  }
}

void initialize_once() {
  static const xnn_status status = xnn_initialize(nullptr);
  check(status, "xnn_initialize");
}

// One pool of 2 for every 2-thread case, created once and kept alive (its
// worker sleeps when idle), as Eigen's pool is.
pthreadpool_t pool_of_two() {
  static const pthreadpool_t pool = pthreadpool_create(2);
  return pool;
}

std::vector<std::size_t> dims_of(const std::vector<int64_t>& shape) {
  std::vector<std::size_t> dims;
  for (const int64_t d : shape) dims.push_back(static_cast<std::size_t>(d));
  return dims;
}

}  // namespace

struct Operator::State {
  xnn_operator_t op = nullptr;
  pthreadpool_t pool = nullptr;
};

Operator::Operator(Op op, const std::vector<int64_t>& a_shape, const float* a, const std::vector<int64_t>& b_shape,
                   const float* b, float* out, int threads)
    : state_(std::make_unique<State>()) {
  initialize_once();
  state_->pool = threads > 1 ? pool_of_two() : nullptr;
  const std::vector<std::size_t> a_dims = dims_of(a_shape);
  const std::vector<std::size_t> b_dims = dims_of(b_shape);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (op == Op::squared_difference) {
    check(xnn_create_squared_difference_nd_f32(0, &state_->op), "xnn_create_squared_difference_nd_f32");
    check(xnn_setup_squared_difference_nd_f32(state_->op, a_dims.size(), a_dims.data(), b_dims.size(),
                                              b_dims.data(), a, b, out, state_->pool),
          "xnn_setup_squared_difference_nd_f32");
  } else {
    check(xnn_create_subtract_nd_f32(-kInf, kInf, 0, &state_->op), "xnn_create_subtract_nd_f32");
    check(xnn_setup_subtract_nd_f32(state_->op, a_dims.size(), a_dims.data(), b_dims.size(), b_dims.data(), a, b,
                                    out, state_->pool),
          "xnn_setup_subtract_nd_f32");
  }
}

Operator::~Operator() {
  if (state_->op != nullptr) xnn_delete_operator(state_->op);
}

void Operator::run() { check(xnn_run_operator(state_->op, state_->pool), "xnn_run_operator"); }

std::string note(int threads) { return threads > 1 ? "op+pthreadpool2" : "op"; }

std::string version() { return SQDIFF_BENCH_XNNPACK_VERSION; }

}  // namespace sqdiff_bench::xnnpack_peer
