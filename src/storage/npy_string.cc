// ReadNpyString (strata/npy.h): the one string of a bytes or UCS-4 array.
#include "common/little_endian.h"
#include "storage/file.h"
#include "storage/npy_header.h"
#include "strata/error.h"
#include "strata/npy.h"

namespace strata {

std::string ReadNpyString(const std::string& path, const std::string& name) {
  FileReader file(path);
  const NpyRawHeader raw = ReadNpyRawHeader(file, name);
  const auto [order, code] = SplitNpyDescr(raw.descr);
  const bool bytes_kind = !code.empty() && code[0] == 'S';
  const bool unicode_kind = !code.empty() && code[0] == 'U';
  std::string_view digits = code.empty() ? code : code.substr(1);
  // A string longer than this is not a name of anything; the cap keeps a corrupt header from
  // becoming a huge read.
  constexpr uint64_t kMaxChars = 4096;
  uint64_t chars = 0;
  bool valid = (bytes_kind || unicode_kind) && !digits.empty() && digits.size() <= 4;
  for (char c : digits) {
    valid = valid && c >= '0' && c <= '9';
    chars = chars * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!valid || chars > kMaxChars) {
    throw Error::Input(
        "expected a string array ('|S<n>' or '<U<n>'), found dtype '" + raw.descr + "'", name);
  }
  // UCS-4 code units need a byte order; '=' is the writer's, which the file does not record.
  if (unicode_kind && order != '<') {
    throw Error::Input("unicode dtype '" + raw.descr + "' is not little-endian ('<U')", name);
  }
  if (!(raw.shape.empty() || (raw.shape.size() == 1 && raw.shape[0] == 1))) {
    throw Error::Input("expected a single string, found shape " + NpyShapeString(raw.shape), name);
  }
  const uint64_t unit_bytes = unicode_kind ? 4 : 1;
  std::string data(chars * unit_bytes, '\0');
  if (file.size() - raw.data_offset < data.size()) {
    throw Error::Input("truncated: dtype '" + raw.descr + "' needs " + std::to_string(data.size()) +
                           " bytes of data, file has " +
                           std::to_string(file.size() - raw.data_offset),
                       name);
  }
  file.ReadExact(raw.data_offset, data.data(), data.size());
  std::string text;
  for (uint64_t i = 0; i < chars; ++i) {
    uint64_t code_point = LoadLittleEndian(
        reinterpret_cast<const unsigned char*>(data.data()) + i * unit_bytes, unit_bytes);
    text += code_point < 128 ? static_cast<char>(code_point) : '?';
  }
  // NumPy pads a shorter string to the dtype's length with NULs and strips them on reading.
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace strata
