#include "xnnpack_quantized_peer.hpp"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sqdiff_bench::xnnpack_quantized_peer {
namespace {

void check(xnn_status status, const char* what) {
  if (status != xnn_status_success) {
    throw std::runtime_error(std::string("xnnpack_quantized_peer: ") + what + " failed with status " +
                             std::to_string(static_cast<int>(status)));
  }
}

// xnn_initialize is idempotent; the pool of 2 is XNNPACK's own (as in
// xnnpack_peer.cpp: the caller and one worker).
pthreadpool_t pool_for(int threads) {
  static const xnn_status status = xnn_initialize(nullptr);
  check(status, "xnn_initialize");
  static const pthreadpool_t pool = pthreadpool_create(2);
  return threads > 1 ? pool : nullptr;
}

}  // namespace

struct Subtract::State {
  xnn_operator_t op = nullptr;
  pthreadpool_t pool = nullptr;
};

Subtract::Subtract(bool is_signed, sqdiff::QuantParams qa, const void* a, sqdiff::QuantParams qb, const void* b,
                   sqdiff::QuantParams qout, void* out, int64_t n, int threads, int64_t b_elements)
    : state_(std::make_unique<State>()) {
  state_->pool = pool_for(threads);
  const std::size_t dims[1] = {static_cast<std::size_t>(n)};
  const std::size_t b_dims[1] = {static_cast<std::size_t>(b_elements == 0 ? n : b_elements)};
  if (is_signed) {
    check(xnn_create_subtract_nd_qs8(static_cast<int8_t>(qa.zero_point), qa.scale, static_cast<int8_t>(qb.zero_point),
                                     qb.scale, static_cast<int8_t>(qout.zero_point), qout.scale, INT8_MIN, INT8_MAX, 0,
                                     &state_->op),
          "xnn_create_subtract_nd_qs8");
    check(xnn_setup_subtract_nd_qs8(state_->op, 1, dims, 1, b_dims, static_cast<const int8_t*>(a),
                                    static_cast<const int8_t*>(b), static_cast<int8_t*>(out), state_->pool),
          "xnn_setup_subtract_nd_qs8");
  } else {
    check(xnn_create_subtract_nd_qu8(static_cast<uint8_t>(qa.zero_point), qa.scale,
                                     static_cast<uint8_t>(qb.zero_point), qb.scale,
                                     static_cast<uint8_t>(qout.zero_point), qout.scale, 0, UINT8_MAX, 0, &state_->op),
          "xnn_create_subtract_nd_qu8");
    check(xnn_setup_subtract_nd_qu8(state_->op, 1, dims, 1, b_dims, static_cast<const uint8_t*>(a),
                                    static_cast<const uint8_t*>(b), static_cast<uint8_t*>(out), state_->pool),
          "xnn_setup_subtract_nd_qu8");
  }
}

Subtract::~Subtract() {
  if (state_->op != nullptr) xnn_delete_operator(state_->op);
}

void Subtract::run() { check(xnn_run_operator(state_->op, state_->pool), "xnn_run_operator"); }

}  // namespace sqdiff_bench::xnnpack_quantized_peer
