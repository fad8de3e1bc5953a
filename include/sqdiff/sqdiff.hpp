// Umbrella header: everything a user of sqdiff needs.
#pragma once

#include "sqdiff/bfloat16.hpp"
#include "sqdiff/bounded_partial_sums.hpp"
#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/float16.hpp"
#include "sqdiff/gradients.hpp"
#include "sqdiff/ops.hpp"
#include "sqdiff/partial_sums.hpp"
#include "sqdiff/quantized.hpp"
#include "sqdiff/reduce.hpp"
#include "sqdiff/simd_target.hpp"
#include "sqdiff/tensor_view.hpp"
#include "sqdiff/threads.hpp"
#include "sqdiff/version.hpp"
