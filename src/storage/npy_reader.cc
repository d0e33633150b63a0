// NpyReader (strata/npy.h): the header validated once, then ranges of elements read through
// a bounded scratch buffer and converted.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "common/float16.h"
#include "storage/file.h"
#include "storage/npy_header.h"
#include "strata/error.h"
#include "strata/npy.h"

namespace strata {
namespace {

template <typename T>
T LoadAt(const std::byte* bytes, size_t index) {
  T value;
  std::memcpy(&value, bytes + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void WidenToInt64(const std::byte* in, size_t count, int64_t* out) {
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<int64_t>(LoadAt<T>(in, i));
}

void ConvertToInt64(NpyDtype dtype, const std::byte* in, size_t count, int64_t* out) {
  switch (dtype) {
    case NpyDtype::kBool:
      // NumPy's bool is 0 or 1, but any other byte is still true.
      for (size_t i = 0; i < count; ++i) out[i] = in[i] != std::byte{0} ? 1 : 0;
      return;
    case NpyDtype::kInt8:
      return WidenToInt64<int8_t>(in, count, out);
    case NpyDtype::kInt16:
      return WidenToInt64<int16_t>(in, count, out);
    case NpyDtype::kInt32:
      return WidenToInt64<int32_t>(in, count, out);
    case NpyDtype::kInt64:
      return WidenToInt64<int64_t>(in, count, out);
    case NpyDtype::kUInt8:
      return WidenToInt64<uint8_t>(in, count, out);
    case NpyDtype::kUInt16:
      return WidenToInt64<uint16_t>(in, count, out);
    case NpyDtype::kUInt32:
      return WidenToInt64<uint32_t>(in, count, out);
    case NpyDtype::kUInt64:
      for (size_t i = 0; i < count; ++i) {
        uint64_t value = LoadAt<uint64_t>(in, i);
        constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        out[i] = static_cast<int64_t>(std::min(value, kMax));
      }
      return;
    default:
      throw Error::Internal(fmt::format("ConvertToInt64 on {}", NpyDtypeName(dtype)));
  }
}

void ConvertToFloat32(NpyDtype dtype, const std::byte* in, size_t count, float* out) {
  switch (dtype) {
    case NpyDtype::kFloat16:
      for (size_t i = 0; i < count; ++i) out[i] = HalfToFloat(LoadAt<uint16_t>(in, i));
      return;
    case NpyDtype::kFloat32:
      std::memcpy(out, in, count * sizeof(float));
      return;
    case NpyDtype::kFloat64:
      // IEEE conversion: rounds to nearest, and values beyond the float range become inf.
      for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(LoadAt<double>(in, i));
      return;
    default:
      throw Error::Internal(fmt::format("ConvertToFloat32 on {}", NpyDtypeName(dtype)));
  }
}

// Reads [first, first + out.size()) through a bounded scratch buffer, converting each piece.
template <typename Out, typename Convert>
void ReadConverted(const NpyReader& reader, uint64_t first, std::span<Out> out, Convert convert) {
  size_t item_bytes = NpyItemBytes(reader.dtype());
  size_t per_step = NpyReader::kScratchBytes / item_bytes;
  std::vector<std::byte> scratch(std::min(out.size(), per_step) * item_bytes);
  for (size_t done = 0; done < out.size();) {
    size_t count = std::min(per_step, out.size() - done);
    reader.ReadRaw(first + done, count, scratch.data());
    convert(reader.dtype(), scratch.data(), count, out.data() + done);
    done += count;
  }
}

}  // namespace

NpyReader::NpyReader(const std::string& path) : NpyReader(path, path) {}

NpyReader::NpyReader(const std::string& path, const std::string& name)
    : path_(name), file_(std::make_unique<FileReader>(path)) {
  NpyRawHeader raw = ReadNpyRawHeader(*file_, path_);
  header_.dtype = ParseNpyDescr(raw.descr, path_);
  header_.shape = std::move(raw.shape);
  header_.data_offset = raw.data_offset;
  header_.major_version = raw.major_version;

  // NpyHeader's invariant: the element and byte counts fit in 64 bits. An array with a zero
  // dimension is empty whatever the other dimensions are.
  const std::vector<uint64_t>& shape = header_.shape;
  if (std::find(shape.begin(), shape.end(), 0) == shape.end()) {
    uint64_t limit = std::numeric_limits<uint64_t>::max() / NpyItemBytes(header_.dtype);
    uint64_t count = 1;
    for (uint64_t dim : shape) {
      if (count > limit / dim) {
        throw Error::Input("malformed .npy header: shape " + NpyShapeString(shape) + " of " +
                               std::string(NpyDtypeName(header_.dtype)) + " is too large",
                           path_);
      }
      count *= dim;
    }
  }
  uint64_t data_bytes = header_.data_bytes();
  const uint64_t file_bytes = file_->size();
  if (file_bytes - header_.data_offset < data_bytes) {
    throw Error::Input("truncated: header declares shape " + NpyShapeString(header_.shape) +
                           " of " + std::string(NpyDtypeName(header_.dtype)) + " = " +
                           std::to_string(data_bytes) + " bytes of data, file has " +
                           std::to_string(file_bytes - header_.data_offset),
                       path_);
  }
}

NpyReader::~NpyReader() = default;
NpyReader::NpyReader(NpyReader&& other) noexcept = default;
NpyReader& NpyReader::operator=(NpyReader&& other) noexcept = default;

uint64_t NpyReader::rows() const { return header_.shape.empty() ? 1 : header_.shape[0]; }

uint64_t NpyReader::row_elements() const {
  uint64_t count = 1;
  for (size_t i = 1; i < header_.shape.size(); ++i) count *= header_.shape[i];
  return count;
}

void NpyReader::CheckRange(uint64_t first, uint64_t count) const {
  uint64_t total = num_elements();
  if (first > total || count > total - first) {
    throw Error::Internal("read of elements [" + std::to_string(first) + ", " +
                          std::to_string(first + count) + ") is past the end of " + path_ +
                          ", which has " + std::to_string(total));
  }
}

void NpyReader::ReadRaw(uint64_t first, uint64_t count, void* out) const {
  CheckRange(first, count);
  uint64_t item_bytes = NpyItemBytes(header_.dtype);
  file_->ReadExact(header_.data_offset + first * item_bytes, out,
                   static_cast<size_t>(count * item_bytes));
}

void NpyReader::ReadInt64(uint64_t first, std::span<int64_t> out) const {
  if (!NpyIsInteger(header_.dtype)) {
    throw Error::Input(
        fmt::format("expected an integer array, found {}", NpyDtypeName(header_.dtype)), path_);
  }
  CheckRange(first, out.size());
  if (header_.dtype == NpyDtype::kInt64) return ReadRaw(first, out.size(), out.data());
  ReadConverted(*this, first, out, ConvertToInt64);
}

void NpyReader::ReadFloat32(uint64_t first, std::span<float> out) const {
  if (!NpyIsFloat(header_.dtype)) {
    throw Error::Input(
        fmt::format("expected a floating-point array, found {}", NpyDtypeName(header_.dtype)),
        path_);
  }
  CheckRange(first, out.size());
  if (header_.dtype == NpyDtype::kFloat32) return ReadRaw(first, out.size(), out.data());
  ReadConverted(*this, first, out, ConvertToFloat32);
}

}  // namespace strata
