// Memory for the tensors a run makes (random inputs, operators' outputs).
#pragma once

#include <cstddef>
#include <memory>

namespace sqdiff::tools::tflite {

// Uninitialised storage, 64-byte aligned. From 2 MiB on it is aligned to
// 2 MiB and advised as transparent huge pages: a fresh output's first touch
// is most of a large operator's time otherwise (a [2048,2048] float32 output
// faults 4096 pages of 4 KiB, 8 of 2 MiB). Throws std::bad_alloc.
std::shared_ptr<void> allocate_tensor_storage(std::size_t bytes);

// Maps `bytes` of a file read in place (an --input .npy) into the page table
// now, one read per page, so that the operators do not fault them in: their
// time is the run's, a file's is the inputs'.
void touch_pages(const void* data, std::size_t bytes);

}  // namespace sqdiff::tools::tflite
