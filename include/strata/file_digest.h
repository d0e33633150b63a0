// FileDigest is what meta.json records of every file of a dataset: its size and its xxh64
// (seed 0), computed while the file is written and recomputed by `strata info --verify`.
#pragma once

#include <cstdint>

namespace strata {

struct FileDigest {
  uint64_t bytes = 0;
  uint64_t xxh64 = 0;
};

}  // namespace strata
