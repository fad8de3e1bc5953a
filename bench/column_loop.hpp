// The column reduction's least loop, for the per-column case's diagnosis
// (issue 23): sums[j % kept] += (a[r][j] - b[r][j])^2 over the rows of two
// f32 [rows, columns] arrays, widened to f64 with one FMA per element, reading
// 4 KiB ahead as sqdiff's column kernel does. With kept == columns it is the
// plain reduction (the running sums take 8 bytes a column); with fewer, the
// same bytes are read and the same arithmetic done, but the sums take only
// kept * 8 bytes. Timing both beside the read bound shows what the running
// sums' size costs, whatever sqdiff's own code around it does.
#pragma once

#include <cstddef>

namespace sqdiff_bench {

// Returns a value depending on every sum (so that the loop cannot be dropped).
// `kept` divides `columns` and is a multiple of 16; `sums` holds `kept` doubles.
double run_column_loop(const float* a, const float* b, std::size_t rows, std::size_t columns, std::size_t kept,
                       double* sums);

}  // namespace sqdiff_bench
