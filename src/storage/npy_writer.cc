// WriteNpy (strata/npy.h): the header NumPy would write, padded so the data starts aligned.
#include "storage/file.h"
#include "storage/npy_header.h"
#include "strata/error.h"
#include "strata/npy.h"

namespace strata {

void WriteNpy(const std::string& path, NpyDtype dtype, std::span<const uint64_t> shape,
              const void* data, int major_version) {
  if (major_version < 1 || major_version > 3) {
    throw Error::Internal("WriteNpy: unsupported .npy format version " +
                          std::to_string(major_version));
  }
  std::string header = "{'descr': '" + NpyDescrOf(dtype) +
                       "', 'fortran_order': False, 'shape': " + NpyShapeString(shape) + ", }";
  size_t preamble_bytes = major_version == 1 ? 10 : 12;
  size_t unpadded = preamble_bytes + header.size() + 1;  // + the final '\n'
  size_t padded = (unpadded + kNpyDataAlignment - 1) / kNpyDataAlignment * kNpyDataAlignment;
  header.append(padded - unpadded, ' ');
  header += '\n';
  uint64_t header_bytes = header.size();
  if (major_version == 1 && header_bytes > 0xffff) {
    throw Error::Internal("WriteNpy: header of " + std::to_string(header_bytes) +
                          " bytes does not fit format version 1.0");
  }
  uint64_t elements = 1;
  for (uint64_t dim : shape) elements *= dim;

  FileWriter writer(path);
  writer.Append(kNpyMagic.data(), kNpyMagic.size());
  const unsigned char version[2] = {static_cast<unsigned char>(major_version), 0};
  writer.Append(version, sizeof(version));
  unsigned char length[4];
  for (size_t i = 0; i < sizeof(length); ++i) {
    length[i] = static_cast<unsigned char>(header_bytes >> (8 * i));
  }
  writer.Append(length, preamble_bytes - 8);
  writer.Append(header.data(), header.size());
  // An empty array may come with a null `data`, which must not reach memcpy.
  if (elements > 0) writer.Append(data, static_cast<size_t>(elements * NpyItemBytes(dtype)));
  writer.Finish();
}

}  // namespace strata
