#include "nn/checkpoint.h"

#include <xxhash.h>

#include <bit>
#include <cstdint>
#include <cstring>

#include "storage/file.h"
#include "storage/staged_file.h"
#include "strata/error.h"

namespace strata {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoints are little-endian; a big-endian port must swap bytes");

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'C', 'K'};
constexpr uint32_t kVersion = 2;  // 1: no snapshot section

class Writer {
 public:
  void Bytes(const void* data, size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  template <typename U>
  void Value(U value) {
    Bytes(&value, sizeof(U));
  }
  void String(std::string_view s, bool wide) {
    if (wide) {
      Value<uint64_t>(s.size());
    } else {
      Value<uint32_t>(static_cast<uint32_t>(s.size()));
    }
    Bytes(s.data(), s.size());
  }
  void Tensor(std::string_view name, MatrixSpan<const float> values) {
    String(name, false);
    Value<uint64_t>(values.rows());
    Value<uint64_t>(values.cols());
    for (size_t i = 0; i < values.rows(); ++i) Bytes(values.row(i), values.cols() * sizeof(float));
  }
  std::vector<std::byte> Finish() {
    Value<uint64_t>(XXH64(out_.data(), out_.size(), 0));
    return std::move(out_);
  }

 private:
  std::vector<std::byte> out_;
};

// A bounds-checked cursor; every read past the end is a truncation error.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, std::string_view source)
      : bytes_(bytes), source_(source) {}

  const std::byte* Bytes(size_t n) {
    if (n > bytes_.size() - pos_) Fail("truncated");
    const std::byte* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  template <typename U>
  U Value() {
    U value;
    std::memcpy(&value, Bytes(sizeof(U)), sizeof(U));
    return value;
  }
  std::string String(bool wide) {
    uint64_t n = wide ? Value<uint64_t>() : Value<uint32_t>();
    if (n > bytes_.size()) Fail("truncated");
    const std::byte* p = Bytes(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  struct TensorRef {
    std::string name;
    uint64_t rows, cols;
    const std::byte* data;
  };
  TensorRef Tensor() {
    TensorRef t;
    t.name = String(false);
    t.rows = Value<uint64_t>();
    t.cols = Value<uint64_t>();
    if (t.cols != 0 && t.rows > (bytes_.size() / sizeof(float)) / t.cols) Fail("truncated");
    t.data = Bytes(t.rows * t.cols * sizeof(float));
    return t;
  }
  [[noreturn]] void Fail(const std::string& what) const {
    throw Error::Input("bad checkpoint: " + what, source_, "byte " + std::to_string(pos_));
  }
  size_t pos() const { return pos_; }

 private:
  std::span<const std::byte> bytes_;
  std::string_view source_;
  size_t pos_ = 0;
};

// Verifies the checksum and the header; leaves the reader after the metadata.
std::string OpenCheckpoint(Reader& reader, std::span<const std::byte> bytes,
                           std::string_view source, uint32_t* version_out = nullptr) {
  if (bytes.size() < sizeof(kMagic) + 8 + 8 + 8 ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw Error::Input("not a Strata checkpoint", source);
  }
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (XXH64(bytes.data(), bytes.size() - 8, 0) != stored) {
    throw Error::Input("checkpoint checksum mismatch (corrupt or truncated)", source);
  }
  reader.Bytes(sizeof(kMagic));
  uint32_t version = reader.Value<uint32_t>();
  if (version != 1 && version != kVersion) {
    reader.Fail("version " + std::to_string(version) + ", expected 1 or " +
                std::to_string(kVersion));
  }
  if (version_out != nullptr) *version_out = version;
  reader.Value<uint32_t>();  // reserved
  return reader.String(true);
}

void CheckTensor(Reader& reader, const Reader::TensorRef& t, const std::string& name,
                 MatrixSpan<const float> target) {
  if (t.name != name) reader.Fail("tensor '" + t.name + "' where '" + name + "' was expected");
  if (t.rows != target.rows() || t.cols != target.cols()) {
    reader.Fail("tensor '" + name + "' is " + std::to_string(t.rows) + "x" +
                std::to_string(t.cols) + ", the model's is " + std::to_string(target.rows()) + "x" +
                std::to_string(target.cols()));
  }
}

// A section's tensors (u32 count, then each), checked against `targets`: their number, names
// and shapes. With `may_be_empty`, a section with no tensors is accepted as well.
template <typename T>
std::vector<Reader::TensorRef> ReadSection(Reader& reader, std::span<const T> targets,
                                           MatrixSpan<float> T::*values, std::string_view what,
                                           bool may_be_empty = false) {
  const uint32_t count = reader.Value<uint32_t>();
  if (count == 0 && may_be_empty) return {};
  if (count != targets.size()) {
    reader.Fail(std::to_string(count) + " " + std::string(what) + ", expected " +
                std::to_string(targets.size()));
  }
  std::vector<Reader::TensorRef> data;
  for (const T& target : targets) {
    data.push_back(reader.Tensor());
    CheckTensor(reader, data.back(), target.name, target.*values);
  }
  return data;
}

void SkipSection(Reader& reader) {
  const uint32_t count = reader.Value<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) reader.Tensor();
}

void CopyTensor(const Reader::TensorRef& t, MatrixSpan<float> target) {
  for (size_t i = 0; i < target.rows(); ++i) {
    std::memcpy(target.row(i), t.data + i * target.cols() * sizeof(float),
                target.cols() * sizeof(float));
  }
}

}  // namespace

std::vector<std::byte> EncodeCheckpoint(std::span<const Parameter> params, Optimizer* optimizer,
                                        std::string_view metadata,
                                        std::span<const Parameter> snapshot) {
  Writer w;
  w.Bytes(kMagic, sizeof(kMagic));
  w.Value<uint32_t>(kVersion);
  w.Value<uint32_t>(0);
  w.String(metadata, true);
  w.Value<uint32_t>(static_cast<uint32_t>(params.size()));
  for (const Parameter& p : params) w.Tensor(p.name, p.value);
  if (optimizer == nullptr) {
    w.String("", false);
    w.Value<uint64_t>(0);
    w.Value<uint32_t>(0);
  } else {
    std::vector<OptimizerState> state = optimizer->State();
    w.String(optimizer->kind(), false);
    w.Value<uint64_t>(optimizer->steps());
    w.Value<uint32_t>(static_cast<uint32_t>(state.size()));
    for (const OptimizerState& s : state) w.Tensor(s.name, s.values);
  }
  w.Value<uint32_t>(static_cast<uint32_t>(snapshot.size()));
  for (const Parameter& p : snapshot) w.Tensor(p.name, p.value);
  return w.Finish();
}

std::string DecodeCheckpoint(std::span<const std::byte> bytes, std::span<const Parameter> params,
                             Optimizer* optimizer, std::string_view source,
                             std::span<const Parameter> snapshot, bool* snapshot_restored) {
  Reader reader(bytes, source);
  uint32_t version = 0;
  std::string metadata = OpenCheckpoint(reader, bytes, source, &version);

  // Pass 1: parse and verify everything.
  std::vector<Reader::TensorRef> param_data =
      ReadSection(reader, params, &Parameter::value, "parameters");
  std::string kind = reader.String(false);
  uint64_t steps = reader.Value<uint64_t>();
  std::vector<OptimizerState> state;
  std::vector<Reader::TensorRef> state_data;
  if (optimizer != nullptr) {
    if (kind != optimizer->kind()) {
      reader.Fail(kind.empty() ? std::string("no optimizer state to resume from")
                               : "optimizer '" + kind + "', the run uses '" +
                                     std::string(optimizer->kind()) + "'");
    }
    state = optimizer->State();
    state_data =
        ReadSection<OptimizerState>(reader, state, &OptimizerState::values, "optimizer tensors");
  } else {
    SkipSection(reader);
  }
  std::vector<Reader::TensorRef> snapshot_data;  // version 1 has no snapshot section
  if (version >= 2 && snapshot.empty()) {
    SkipSection(reader);
  } else if (version >= 2) {
    snapshot_data = ReadSection(reader, snapshot, &Parameter::value, "snapshot tensors",
                                /*may_be_empty=*/true);
  }
  if (reader.pos() != bytes.size() - 8) reader.Fail("unexpected bytes before the checksum");

  // Pass 2: copy.
  for (size_t i = 0; i < params.size(); ++i) CopyTensor(param_data[i], params[i].value);
  if (optimizer != nullptr) {
    for (size_t i = 0; i < state.size(); ++i) CopyTensor(state_data[i], state[i].values);
    optimizer->set_steps(steps);
  }
  for (size_t i = 0; i < snapshot_data.size(); ++i) CopyTensor(snapshot_data[i], snapshot[i].value);
  if (snapshot_restored != nullptr) *snapshot_restored = !snapshot_data.empty();
  return metadata;
}

std::string DecodeCheckpointMetadata(std::span<const std::byte> bytes, std::string_view source) {
  Reader reader(bytes, source);
  return OpenCheckpoint(reader, bytes, source);
}

void WriteCheckpointFile(const std::string& path, std::span<const Parameter> params,
                         Optimizer* optimizer, std::string_view metadata,
                         std::span<const Parameter> snapshot) {
  std::vector<std::byte> bytes = EncodeCheckpoint(params, optimizer, metadata, snapshot);
  StagedFile file(path);
  file.writer().Append(bytes.data(), bytes.size());
  file.Publish();
}

namespace {
std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
}  // namespace

std::string ReadCheckpointFile(const std::string& path, std::span<const Parameter> params,
                               Optimizer* optimizer, std::span<const Parameter> snapshot) {
  std::string bytes = ReadWholeFile(path);
  return DecodeCheckpoint(AsBytes(bytes), params, optimizer, path, snapshot);
}

std::string ReadCheckpointMetadata(const std::string& path) {
  std::string bytes = ReadWholeFile(path);
  return DecodeCheckpointMetadata(AsBytes(bytes), path);
}

}  // namespace strata
