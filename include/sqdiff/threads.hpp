// How many threads a call uses when Options::threads is 0.
#pragma once

namespace sqdiff {

// The library-wide default: set_default_threads(n) if called with n > 0, else
// the SQDIFF_NUM_THREADS environment variable (read once) if it holds a
// positive integer, else the number of CPUs this process may run on.
int default_threads();

// n > 0 sets the default; 0 goes back to the automatic choice. Negative: Error.
void set_default_threads(int n);

}  // namespace sqdiff
