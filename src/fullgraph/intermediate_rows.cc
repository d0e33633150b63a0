#include "fullgraph/intermediate_rows.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/float16.h"
#include "nn/parallel.h"
#include "nn/row_copy.h"
#include "storage/io_engine_base.h"
#include "strata/error.h"

namespace strata {
namespace {

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

// float16 in place, a block at a time through a copy: narrowing front to back, a block's halves
// land before the floats not yet copied; widening back to front, a block's floats land on
// halves already widened or copied.
constexpr uint64_t kConvertBlock = 4096;

void NarrowInPlace(std::byte* raw, uint64_t count) {
  float floats[kConvertBlock];
  uint16_t halves[kConvertBlock];
  for (uint64_t first = 0; first < count; first += kConvertBlock) {
    const uint64_t n = std::min(kConvertBlock, count - first);
    std::memcpy(floats, raw + first * sizeof(float), n * sizeof(float));
    FloatsToHalves({floats, n}, halves);
    std::memcpy(raw + first * sizeof(uint16_t), halves, n * sizeof(uint16_t));
  }
}

void WidenInPlace(std::byte* raw, uint64_t count) {
  uint16_t halves[kConvertBlock];
  float floats[kConvertBlock];
  for (uint64_t end = count; end > 0;) {
    const uint64_t first = end > kConvertBlock ? end - kConvertBlock : 0;
    std::memcpy(halves, raw + first * sizeof(uint16_t), (end - first) * sizeof(uint16_t));
    HalvesToFloats({halves, end - first}, floats);
    std::memcpy(raw + first * sizeof(float), floats, (end - first) * sizeof(float));
    end = first;
  }
}

}  // namespace

uint64_t IntermediateRows::ResidentBytes(uint64_t rows, size_t max_width) {
  return rows * max_width * sizeof(float);
}

uint64_t IntermediateRows::OnDiskBytes(uint64_t rows, size_t max_width, uint64_t chunk_rows) {
  const uint64_t chunk = std::min(rows, chunk_rows);
  return RoundUp(
      2 * (chunk * max_width * sizeof(float) + MaskWords(chunk, max_width) * sizeof(uint64_t)),
      kDirectIoAlignment);
}

IntermediateRows::IntermediateRows(uint64_t rows, size_t max_width, uint64_t chunk_rows,
                                   const std::string& scratch_dir, MemoryBudget& budget,
                                   std::string_view what, bool half_on_disk)
    : rows_(rows),
      max_width_(max_width),
      chunk_rows_(chunk_rows),
      what_(what),
      scratch_dir_(scratch_dir) {
  if (chunk_rows == 0 || chunk_rows % 1024 != 0) {
    throw Error::Internal("IntermediateRows: chunk rows must be a positive multiple of 1024");
  }
  if (half_on_disk) disk_value_bytes_ = sizeof(uint16_t);
  if (scratch_dir.empty()) {
    resident_ = ChargedArray<float>(budget, rows * max_width, what);
    return;
  }
  buffers_ = AlignedBuffer(budget, OnDiskBytes(rows, max_width, chunk_rows), what);
  const uint64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  file_ = ScratchFile(scratch_dir, chunks * chunk_rows * max_width * disk_value_bytes_, what);
  stored_nonzeros_.assign(chunks, kWholeChunk);
}

IntermediateRows::~IntermediateRows() { Close(); }

IntermediateRows::IntermediateRows(IntermediateRows&& other) noexcept { *this = std::move(other); }

IntermediateRows& IntermediateRows::operator=(IntermediateRows&& other) noexcept {
  if (this == &other) return *this;
  Close();
  // A transfer in flight refers to the buffers and the descriptor, which move with it.
  rows_ = other.rows_;
  max_width_ = other.max_width_;
  chunk_rows_ = other.chunk_rows_;
  width_ = other.width_;
  what_ = std::move(other.what_);
  scratch_dir_ = std::move(other.scratch_dir_);
  resident_ = std::move(other.resident_);
  file_ = std::move(other.file_);
  disk_value_bytes_ = other.disk_value_bytes_;
  buffers_ = std::move(other.buffers_);
  stored_nonzeros_ = std::move(other.stored_nonzeros_);
  for (int b = 0; b < 2; ++b) {
    transfers_[b] = std::move(other.transfers_[b]);
    transfer_threads_[b] = std::move(other.transfer_threads_[b]);
  }
  pass_ = std::exchange(other.pass_, Pass::kIdle);
  read_into_ = std::exchange(other.read_into_, false);
  next_row_ = other.next_row_;
  chunk_ = other.chunk_;
  chunk_valid_ = std::exchange(other.chunk_valid_, false);
  stats_ = other.stats_;
  return *this;
}

void IntermediateRows::DrainTransfers() {
  for (std::future<Moved>& transfer : transfers_) {
    if (!transfer.valid()) continue;
    try {
      transfer.get();
    } catch (const std::exception&) {
      // After a failure: the error was, or will not be, reported by the pass.
    }
  }
}

void IntermediateRows::Close() {
  DrainTransfers();
  for (std::unique_ptr<TaskThread>& thread : transfer_threads_) thread.reset();
  file_ = ScratchFile();
}

uint64_t IntermediateRows::ChunkRows(uint64_t chunk) const {
  return std::min(rows_, (chunk + 1) * chunk_rows_) - chunk * chunk_rows_;
}

void IntermediateRows::Start(uint64_t chunk, bool write, float* values) {
  if (values == nullptr) values = Buffer(chunk);
  uint64_t* masks = Masks(chunk);
  const uint64_t rows = ChunkRows(chunk), width = width_, count = rows * width;
  const bool half = disk_value_bytes_ == sizeof(uint16_t);
  const uint64_t offset = chunk * chunk_rows_ * width_ * disk_value_bytes_;
  // Direct I/O moves whole 4 KiB units: the last chunk's tail is padding, inside both the
  // buffer and the reserved file.
  const uint64_t unit = file_.direct() ? kDirectIoAlignment : 1;
  const uint64_t whole = RoundUp(count * disk_value_bytes_, unit);
  ++(write ? stats_.writes : stats_.reads);
  // float32 chunks travel without their zeros when that moves fewer units (zero_elision.h);
  // how many values each kept is the one thing about a chunk that stays in memory.
  uint64_t* stored = &stored_nonzeros_[chunk];
  std::unique_ptr<TaskThread>& thread = transfer_threads_[chunk % 2];
  if (!thread) thread = std::make_unique<TaskThread>();
  const bool expand_later = !write && read_into_;
  transfers_[chunk % 2] = thread->Submit(
      [fd = file_.fd(), direct = file_.direct(), write, half, expand_later, values, masks, rows,
       width, count, offset, unit, whole, stored, what = what_, dir = scratch_dir_]() -> Moved {
        auto* raw = reinterpret_cast<std::byte*>(values);
        uint64_t bytes = whole;
        if (write && half) NarrowInPlace(raw, count);
        if (write && !half) {
          *stored = kWholeChunk;
          if (!LooksDense(values, count)) {
            const uint64_t nonzeros = NonzeroMasks(values, rows, width, masks);
            const uint64_t elided = RoundUp(ElidedBytes(nonzeros, rows, width), unit);
            if (elided < whole) {
              *stored = nonzeros;
              ElideZeros(values, rows, width, masks, nonzeros);
              bytes = elided;
            }
          }
        }
        if (!write && *stored != kWholeChunk) {
          bytes = RoundUp(ElidedBytes(*stored, rows, width), unit);
        }
        TransferScratch(fd, direct, write, raw, offset, bytes, what, dir);
        if (!write && half) WidenInPlace(raw, count);
        if (!write && !expand_later && *stored != kWholeChunk) {
          RestoreZeros(values, rows, width, masks, *stored);
        }
        return {bytes, write};
      });
}

void IntermediateRows::Count(const Moved& moved) {
  (moved.write ? stats_.bytes_written : stats_.bytes_read) += moved.bytes;
}

void IntermediateRows::Finish(uint64_t chunk) {
  std::future<Moved>& transfer = transfers_[chunk % 2];
  if (!transfer.valid()) return;
  const auto start = std::chrono::steady_clock::now();
  try {
    Count(transfer.get());
  } catch (...) {
    FinishAll();
    throw;
  }
  stats_.wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void IntermediateRows::FinishAll() {
  std::exception_ptr first;
  for (std::future<Moved>& transfer : transfers_) {
    if (!transfer.valid()) continue;
    try {
      Count(transfer.get());
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void IntermediateRows::BeginWrite(size_t width) {
  if (width == 0 || width > max_width_) {
    throw Error::Internal("IntermediateRows: width outside (0, max_width]");
  }
  if (disk_value_bytes_ * chunk_rows_ * width % kDirectIoAlignment != 0) {
    throw Error::Internal("IntermediateRows: float16 chunks of an odd width need 2048 rows");
  }
  FinishAll();
  pass_ = Pass::kWriting;
  width_ = width;
  next_row_ = 0;
  chunk_valid_ = false;
}

MatrixSpan<float> IntermediateRows::Write(uint64_t begin, uint64_t end) {
  if (pass_ != Pass::kWriting) throw Error::Internal("IntermediateRows: a write outside a pass");
  if (begin != next_row_ || end <= begin || end > rows_ || ChunkOf(end - 1) != ChunkOf(begin)) {
    throw Error::Internal(fmt::format(
        "IntermediateRows: written rows [{}, {}) do not continue at row {} within one chunk", begin,
        end, next_row_));
  }
  next_row_ = end;
  if (!on_disk()) return {resident_.data() + begin * width_, end - begin, width_};
  const uint64_t chunk = ChunkOf(begin);
  if (!chunk_valid_ || chunk != chunk_) {
    if (chunk_valid_) Start(chunk_, /*write=*/true);
    Finish(chunk);  // the write of chunk - 2, from the same buffer
    chunk_ = chunk;
    chunk_valid_ = true;
  }
  return {Buffer(chunk) + (begin - chunk * chunk_rows_) * width_, end - begin, width_};
}

void IntermediateRows::EndWrite() {
  if (pass_ != Pass::kWriting || next_row_ != rows_) {
    throw Error::Internal(
        fmt::format("IntermediateRows: a write pass ended at row {} of {}", next_row_, rows_));
  }
  pass_ = Pass::kIdle;
  if (!on_disk()) return;
  if (chunk_valid_) Start(chunk_, /*write=*/true);
  chunk_valid_ = false;
  FinishAll();
}

void IntermediateRows::OpenRead(bool into) {
  if (pass_ == Pass::kWriting || width_ == 0) {
    throw Error::Internal("IntermediateRows: a read pass before a completed write pass");
  }
  FinishAll();
  pass_ = Pass::kReading;
  read_into_ = into;
  chunk_valid_ = false;
}

void IntermediateRows::BeginRead(bool into) {
  OpenRead(into);
  if (on_disk() && rows_ > 0) Start(0, /*write=*/false);
}

MatrixSpan<float> IntermediateRows::Read(uint64_t begin, uint64_t end) {
  if (read_into_) throw Error::Internal("IntermediateRows: a Read in a pass begun for ReadInto");
  return Reach(begin, end);
}

void IntermediateRows::ReadInto(uint64_t begin, uint64_t end, MatrixSpan<float> to,
                                unsigned threads) {
  if (!read_into_) throw Error::Internal("IntermediateRows: a ReadInto in a pass begun for Read");
  const MatrixSpan<float> rows = Reach(begin, end);
  const uint64_t chunk = ChunkOf(begin);
  if (!on_disk() || stored_nonzeros_[chunk] == kWholeChunk) {
    CopyRows(rows, to, threads);
    return;
  }
  const uint64_t first = chunk * chunk_rows_, count = ChunkRows(chunk);
  if (begin != first || end != first + count || to.rows() != count || to.cols() != width_) {
    throw Error::Internal("IntermediateRows: a coded chunk is read whole, into its shape");
  }
  const float* coded = Buffer(chunk);
  const uint64_t nonzeros = stored_nonzeros_[chunk];
  ForRows(threads, count, width_, [&](uint64_t b, uint64_t e) {
    ExpandRows(coded, count, width_, nonzeros, b, e, to.row(b), to.stride());
  });
}

MatrixSpan<float> IntermediateRows::Reach(uint64_t begin, uint64_t end) {
  if (pass_ != Pass::kReading) throw Error::Internal("IntermediateRows: a read outside a pass");
  const uint64_t chunk = ChunkOf(begin);
  if (end <= begin || end > rows_ || ChunkOf(end - 1) != chunk ||
      (on_disk() && !(chunk_valid_ ? chunk == chunk_ || chunk == chunk_ + 1 : chunk == 0))) {
    throw Error::Internal(
        fmt::format("IntermediateRows: read rows [{}, {}) are not in the current or the next chunk",
                    begin, end));
  }
  if (!on_disk()) return {resident_.data() + begin * width_, end - begin, width_};
  if (!chunk_valid_ || chunk != chunk_) {
    Finish(chunk);
    chunk_ = chunk;
    chunk_valid_ = true;
    // Into the other buffer, whose chunk the caller has moved past.
    if ((chunk + 1) * chunk_rows_ < rows_) Start(chunk + 1, /*write=*/false);
  }
  return {Buffer(chunk) + (begin - chunk * chunk_rows_) * width_, end - begin, width_};
}

void IntermediateRows::EndRead() {
  pass_ = Pass::kIdle;
  read_into_ = false;
  chunk_valid_ = false;
  FinishAll();
}

void IntermediateRows::Store(MatrixSpan<const float> rows) {
  BeginWrite(rows.cols());
  for (uint64_t begin = 0; begin < rows.rows(); begin += chunk_rows_) {
    const uint64_t end = std::min<uint64_t>(rows.rows(), begin + chunk_rows_);
    const MatrixSpan<float> to = Write(begin, end);
    CopyRows(rows.Sub(begin, 0, end - begin, rows.cols()), to);
  }
  EndWrite();
}

float* IntermediateRows::InPlace(MatrixSpan<float> rows, uint64_t chunk) const {
  if (!on_disk() || rows.rows() != rows_ || rows.cols() != width_ || rows.stride() != width_) {
    return nullptr;
  }
  float* values = rows.data() + chunk * chunk_rows_ * width_;
  const uint64_t unit = file_.direct() ? kDirectIoAlignment : 1;
  const bool fits = ChunkRows(chunk) * width_ * sizeof(float) % unit == 0;
  return fits && reinterpret_cast<uintptr_t>(values) % unit == 0 ? values : nullptr;
}

void IntermediateRows::Load(MatrixSpan<float> rows) {
  if (InPlace(rows, 0) == nullptr) {
    BeginRead();
    for (uint64_t begin = 0; begin < rows.rows(); begin += chunk_rows_) {
      const uint64_t end = std::min<uint64_t>(rows.rows(), begin + chunk_rows_);
      const MatrixSpan<const float> from = Read(begin, end);
      CopyRows(from, rows.Sub(begin, 0, end - begin, rows.cols()));
    }
    EndRead();
    return;
  }
  OpenRead(/*into=*/false);
  // Each chunk into its rows, two at a time as a read pass's (a buffer's thread and zero bits
  // each); a last chunk whose 4 KiB units overrun the rows goes through its buffer.
  const uint64_t chunks = (rows_ + chunk_rows_ - 1) / chunk_rows_;
  try {
    for (uint64_t chunk = 0; chunk < chunks; ++chunk) {
      Finish(chunk);
      Start(chunk, /*write=*/false, InPlace(rows, chunk));
    }
  } catch (...) {
    // A Start that failed (no thread, no memory) leaves the other chunk's read writing into
    // `rows`: it finishes before the error leaves.
    DrainTransfers();
    pass_ = Pass::kIdle;
    throw;
  }
  EndRead();
  const uint64_t last = chunks - 1;
  if (chunks > 0 && InPlace(rows, last) == nullptr) {
    const uint64_t begin = last * chunk_rows_;
    CopyRows(MatrixSpan<const float>(Buffer(last), rows_ - begin, width_),
             rows.RowRange(begin, rows_ - begin));
  }
}

}  // namespace strata
