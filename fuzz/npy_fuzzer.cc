// Fuzzes NpyReader over a whole .npy file: the magic, version and header length, the header's
// Python dict, the dtype and shape checks, and then the body, every element read back
// converted as the importers read it.
#include <cstdint>
#include <vector>

#include "fuzz_support.h"
#include "strata/npy.h"

namespace strata {

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzInputFile file;
  const std::string& path = file.Write(data, size);
  fuzz::AcceptInputErrors([&] {
    NpyReader reader(path);
    const NpyHeader& header = reader.header();
    // The header's invariant, which makes reading every element below safe: the file holds
    // the data it declares.
    fuzz::Check(header.data_offset <= size && header.data_bytes() <= size - header.data_offset,
                "accepted header declares more data than the file holds");
    fuzz::Check(reader.num_elements() == 0 ||
                    reader.rows() * reader.row_elements() == reader.num_elements(),
                "rows() * row_elements() != num_elements()");
    if (NpyIsFloat(reader.dtype())) {
      std::vector<float> values(reader.num_elements());
      reader.ReadFloat32(0, values);
    } else {
      std::vector<int64_t> values(reader.num_elements());
      reader.ReadInt64(0, values);
    }
  });
  return 0;
}

}  // namespace strata
