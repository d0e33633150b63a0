#include "storage/npy_header.h"

#include <algorithm>
#include <cstring>

#include "common/little_endian.h"
#include "storage/file.h"
#include "storage/npy_header_dict.h"
#include "strata/error.h"

namespace strata {
namespace {

// NumPy itself refuses headers over 10000 bytes by default; anything Strata accepts is well
// under 200. The cap keeps a corrupt length field from becoming a 4 GiB allocation.
constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 20;

struct DtypeInfo {
  NpyDtype dtype;
  std::string_view code;  // descr without the byte-order character
  size_t bytes;
  const char* name;
};

constexpr DtypeInfo kDtypes[] = {
    {NpyDtype::kBool, "b1", 1, "bool"},       {NpyDtype::kInt8, "i1", 1, "int8"},
    {NpyDtype::kInt16, "i2", 2, "int16"},     {NpyDtype::kInt32, "i4", 4, "int32"},
    {NpyDtype::kInt64, "i8", 8, "int64"},     {NpyDtype::kUInt8, "u1", 1, "uint8"},
    {NpyDtype::kUInt16, "u2", 2, "uint16"},   {NpyDtype::kUInt32, "u4", 4, "uint32"},
    {NpyDtype::kUInt64, "u8", 8, "uint64"},   {NpyDtype::kFloat16, "f2", 2, "float16"},
    {NpyDtype::kFloat32, "f4", 4, "float32"}, {NpyDtype::kFloat64, "f8", 8, "float64"},
};

const DtypeInfo& Info(NpyDtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  throw Error::Internal("unknown NpyDtype " + std::to_string(static_cast<int>(dtype)));
}

// Interprets the parsed header dict: exactly the keys 'descr', 'fortran_order' and 'shape'.
void InterpretHeader(const PyLiteral& dict, const std::string& path, NpyRawHeader* header) {
  auto malformed = [&](const std::string& what) {
    return Error::Input("malformed .npy header: " + what, path);
  };
  if (dict.kind != PyLiteral::Kind::kDict)
    throw malformed("expected a dict, found " + NpyHeaderExcerpt(dict.source));
  const PyLiteral* descr = nullptr;
  const PyLiteral* fortran_order = nullptr;
  const PyLiteral* shape = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyLiteral& key = dict.items[i];
    if (key.kind != PyLiteral::Kind::kString) {
      throw malformed("dict key " + NpyHeaderExcerpt(key.source) + " is not a string");
    }
    const PyLiteral** slot = key.text == "descr"           ? &descr
                             : key.text == "fortran_order" ? &fortran_order
                             : key.text == "shape"         ? &shape
                                                           : nullptr;
    if (slot == nullptr) throw malformed("unexpected key '" + key.text + "'");
    if (*slot != nullptr) throw malformed("key '" + key.text + "' appears twice");
    *slot = &dict.items[i + 1];
  }
  if (descr == nullptr) throw malformed("no 'descr' key");
  if (fortran_order == nullptr) throw malformed("no 'fortran_order' key");
  if (shape == nullptr) throw malformed("no 'shape' key");

  if (descr->kind == PyLiteral::Kind::kList) {
    throw Error::Input("structured dtype " + NpyHeaderExcerpt(descr->source) +
                           " is not supported, save each field as its own array",
                       path);
  }
  if (descr->kind != PyLiteral::Kind::kString) {
    throw malformed("'descr' is " + NpyHeaderExcerpt(descr->source) + ", expected a string");
  }
  header->descr = descr->text;

  if (shape->kind != PyLiteral::Kind::kTuple) {
    throw malformed("'shape' is " + NpyHeaderExcerpt(shape->source) + ", expected a tuple");
  }
  header->shape.clear();
  for (const PyLiteral& dim : shape->items) {
    if (dim.kind != PyLiteral::Kind::kInteger || dim.negative) {
      throw malformed("'shape' " + NpyHeaderExcerpt(shape->source) +
                      " has a dimension that is not a non-negative integer");
    }
    header->shape.push_back(dim.integer);
  }

  if (fortran_order->kind != PyLiteral::Kind::kBool) {
    throw malformed("'fortran_order' is " + NpyHeaderExcerpt(fortran_order->source) +
                    ", expected True or False");
  }
  // With at most one dimension, Fortran and C order are the same bytes.
  if (fortran_order->flag && header->shape.size() > 1) {
    throw Error::Input("Fortran-order array is not supported, save it with order='C'", path);
  }
}

}  // namespace

NpyDescr SplitNpyDescr(std::string_view descr) {
  NpyDescr split{'\0', descr};
  if (!descr.empty() && std::strchr("<>|=", descr[0]) != nullptr) {
    split.order = descr[0];
    split.code.remove_prefix(1);
  }
  return split;
}

std::string NpyDescrOf(NpyDtype dtype) {
  const DtypeInfo& info = Info(dtype);
  return std::string(info.bytes == 1 ? "|" : "<") + std::string(info.code);
}

NpyDtype ParseNpyDescr(const std::string& descr, const std::string& path) {
  const auto [order, code] = SplitNpyDescr(descr);
  const DtypeInfo* found = nullptr;
  for (const DtypeInfo& info : kDtypes) {
    if (info.code == code) found = &info;
  }
  if (found == nullptr) {
    throw Error::Input("dtype '" + descr +
                           "' is not supported (Strata reads bool, int8/16/32/64, "
                           "uint8/16/32/64 and float16/32/64 arrays)",
                       path);
  }
  // Byte order means nothing for one-byte types, whatever character the writer put there.
  if (found->bytes == 1 || order == '<') return found->dtype;
  if (order == '>') {
    throw Error::Input("big-endian dtype '" + descr + "' is not supported, save it little-endian",
                       path);
  }
  // '=' (or no character) is the writing machine's native order, which the file does not
  // record; '|' is not valid for multi-byte types at all.
  throw Error::Input("dtype '" + descr + "' does not say its byte order, save it as '<" +
                         std::string(found->code) + "'",
                     path);
}

NpyRawHeader ReadNpyRawHeader(const FileReader& file, const std::string& name) {
  const uint64_t file_bytes = file.size();
  unsigned char preamble[12] = {};
  size_t got = file.ReadSome(0, preamble, std::min<uint64_t>(file_bytes, sizeof(preamble)));
  if (got == 0) throw Error::Input("not a .npy file: the file is empty", name);
  if (std::memcmp(preamble, kNpyMagic.data(), std::min(got, kNpyMagic.size())) != 0) {
    // A .npz is a zip of .npy files; saying so saves the user a puzzled look at the bytes.
    bool zip = got >= 2 && preamble[0] == 'P' && preamble[1] == 'K';
    throw Error::Input(zip ? "not a .npy file: bad magic (this looks like a .npz archive, extract "
                             "the array first)"
                           : "not a .npy file: bad magic",
                       name);
  }
  auto truncated_header = [&](uint64_t needed) {
    return Error::Input("truncated .npy header: it needs " + std::to_string(needed) +
                            " bytes, the file has " + std::to_string(file_bytes),
                        name);
  };
  if (got < 8) throw truncated_header(8);
  int major = preamble[6];
  int minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0) {
    throw Error::Input("unsupported .npy format version " + std::to_string(major) + "." +
                           std::to_string(minor) + ", expected 1.0, 2.0 or 3.0",
                       name);
  }
  size_t length_bytes = major == 1 ? 2 : 4;
  size_t preamble_bytes = 8 + length_bytes;
  if (got < preamble_bytes) throw truncated_header(preamble_bytes);
  uint64_t header_bytes = LoadLittleEndian(preamble + 8, length_bytes);
  if (header_bytes > kMaxHeaderBytes) {
    throw Error::Input("malformed .npy header: its length " + std::to_string(header_bytes) +
                           " is implausibly large",
                       name);
  }
  uint64_t data_offset = preamble_bytes + header_bytes;
  if (file_bytes < data_offset) throw truncated_header(data_offset);
  // Versions 1.0 and 2.0 are latin-1 and 3.0 is utf-8; the keys and values that matter are
  // ASCII either way, so the bytes are parsed as they are.
  std::string text(header_bytes, '\0');
  file.ReadExact(preamble_bytes, text.data(), text.size());
  PyLiteral dict = ParseNpyHeaderDict(text, name);
  NpyRawHeader header;
  InterpretHeader(dict, name, &header);
  header.data_offset = data_offset;
  header.major_version = major;
  return header;
}

size_t NpyItemBytes(NpyDtype dtype) { return Info(dtype).bytes; }

std::string_view NpyDtypeName(NpyDtype dtype) { return Info(dtype).name; }

bool NpyIsInteger(NpyDtype dtype) { return !NpyIsFloat(dtype); }

bool NpyIsFloat(NpyDtype dtype) {
  return dtype == NpyDtype::kFloat16 || dtype == NpyDtype::kFloat32 || dtype == NpyDtype::kFloat64;
}

std::string NpyShapeString(std::span<const uint64_t> shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ',';
  text += ')';
  return text;
}

uint64_t NpyHeader::num_elements() const {
  uint64_t count = 1;
  for (uint64_t dim : shape) count *= dim;
  return count;
}

uint64_t NpyHeader::data_bytes() const { return num_elements() * NpyItemBytes(dtype); }

}  // namespace strata
