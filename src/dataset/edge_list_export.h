// Writing a dataset's graph back out as a SNAP-style edge list ("src dst" per line, in CSC
// order: by destination, then source), streaming both CSC files so memory stays small.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

// Returns the number of edges written. The output file is published atomically.
uint64_t ExportEdgeList(const std::string& dataset_dir, const std::string& out_path);

}  // namespace strata
