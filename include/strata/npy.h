// Reading and writing NumPy .npy files, the format users hand Strata their edges, features and
// labels in. The format (numpy/lib/format.py) is a 6-byte magic "\x93NUMPY", a version byte
// pair, a little-endian header length (uint16 in version 1.0, uint32 in 2.0 and 3.0), then a
// Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), }
// padded with spaces and ended by '\n', then the array's raw bytes in C order.
//
// Only what Strata can use is accepted: little-endian bool, integer and float16/32/64 arrays in
// C order. Everything else (big-endian, strings, objects, structured or complex dtypes,
// Fortran order) is refused up front with an input error that says what was found and names
// the file, rather than read as garbage later. Single strings, which SciPy stores beside its
// arrays, have their own reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class FileReader;

enum class NpyDtype {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
};

// Bytes per element: 1, 2, 4 or 8.
size_t NpyItemBytes(NpyDtype dtype);
// NumPy's name for the dtype: "bool", "int64", "float32", ...
std::string_view NpyDtypeName(NpyDtype dtype);
// True for bool and the signed and unsigned integers: the dtypes ReadInt64 accepts.
bool NpyIsInteger(NpyDtype dtype);
// True for float16, float32 and float64: the dtypes ReadFloat32 accepts.
bool NpyIsFloat(NpyDtype dtype);
// A shape as Python prints a tuple: "()", "(5,)", "(2, 10858)".
std::string NpyShapeString(std::span<const uint64_t> shape);

// What a .npy header declares, after validation.
//
// Invariants: num_elements() * NpyItemBytes(dtype) does not overflow uint64_t, and the file
// holds at least that many bytes from data_offset on.
struct NpyHeader {
  NpyDtype dtype = NpyDtype::kUInt8;
  std::vector<uint64_t> shape;  // empty for a 0-d (scalar) array
  uint64_t data_offset = 0;     // where the array's bytes start in the file
  int major_version = 1;        // 1, 2 or 3

  // Product of the shape: 1 for a 0-d array, 0 when any dimension is 0.
  uint64_t num_elements() const;
  uint64_t data_bytes() const;
};

// NpyReader opens a .npy file, validates its header, and reads ranges of its elements,
// converted, so that arrays far larger than memory can be streamed in chunks. Elements are
// named by their flat C-order index: element (i, j) of a 2-D array is i * shape[1] + j.
//
// Invariant: after construction the header is valid and the file is long enough for the
// data it declares; reads within [0, num_elements()) can fail only on an I/O error.
//
// Thread safety: the Read* methods are const and use pread with per-call scratch of at most
// kScratchBytes, so several threads may read one NpyReader at once.
class NpyReader {
 public:
  // Raw bytes converted per step; memory use does not depend on the array's size.
  static constexpr size_t kScratchBytes = size_t{1} << 20;

  // Opens and validates `path`; throws Error::Input naming the file if it is not a .npy file
  // Strata can read.
  explicit NpyReader(const std::string& path);
  // Reads `path` but names it `name` in errors and path(): a member extracted from an archive
  // is named after the archive ("x.npz:data.npy"), not the scratch file it was extracted to.
  NpyReader(const std::string& path, const std::string& name);
  ~NpyReader();
  NpyReader(NpyReader&& other) noexcept;
  NpyReader& operator=(NpyReader&& other) noexcept;
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;

  const NpyHeader& header() const { return header_; }
  // The file as errors name it: the path, or the name given to the constructor.
  const std::string& path() const { return path_; }
  NpyDtype dtype() const { return header_.dtype; }
  const std::vector<uint64_t>& shape() const { return header_.shape; }
  size_t ndim() const { return header_.shape.size(); }
  uint64_t num_elements() const { return header_.num_elements(); }
  // shape[0], or 1 for a 0-d array.
  uint64_t rows() const;
  // Elements per row: the product of shape[1:], 1 for 0-d and 1-d arrays.
  uint64_t row_elements() const;

  // Reads elements [first, first + out.size()) of a bool or integer array as int64; uint64
  // values above INT64_MAX saturate to INT64_MAX. Throws Error::Input on a float array and
  // Error::Internal when the range reaches past num_elements().
  void ReadInt64(uint64_t first, std::span<int64_t> out) const;
  // Reads elements [first, first + out.size()) of a float array as float32: float16 exactly,
  // float64 rounded to nearest. Throws Error::Input on a bool or integer array and
  // Error::Internal when the range reaches past num_elements().
  void ReadFloat32(uint64_t first, std::span<float> out) const;
  // Copies elements [first, first + count) as stored (little-endian) into `out`, which must
  // hold count * NpyItemBytes(dtype()) bytes.
  void ReadRaw(uint64_t first, uint64_t count, void* out) const;

 private:
  void CheckRange(uint64_t first, uint64_t count) const;

  std::string path_;
  std::unique_ptr<FileReader> file_;
  NpyHeader header_;
};

// Reads the one string of a 0-d (or one-element 1-d) array of bytes ('|S<n>') or UCS-4 text
// ('<U<n>'), as NumPy returns it: without trailing NULs. Code points above 127 become '?':
// such strings are only ever compared with ASCII names (SciPy's save_npz stores the matrix
// format, 'csr', this way). `name` is the file as errors name it.
std::string ReadNpyString(const std::string& path, const std::string& name);

// Writes a C-order little-endian array of `shape` whose num_elements * NpyItemBytes(dtype)
// bytes are at `data`, as a .npy file of format version `major_version` (1, 2 or 3). As NumPy
// does, the header is padded with spaces and '\n' so that the data starts at a multiple of 64.
void WriteNpy(const std::string& path, NpyDtype dtype, std::span<const uint64_t> shape,
              const void* data, int major_version = 1);

}  // namespace strata
