// IntermediateRows holds one of the full-graph trainer's N-row intermediates (a layer's
// output, a gradient), or one of layer-wise inference's activations, that are only ever written
// and read in row order, in memory when the budget holds them and otherwise in a scratch file:
// the "narrow intermediates are themselves row-blocked on disk". Only the matrix a
// propagation gathers from (read at neighbours' rows) has to stay resident; everything else
// passes through here.
//
// A pass writes or reads rows [0, rows) in order, a piece [begin, end) at a time, each piece
// inside one chunk of `chunk_rows` rows. On disk, the file holds the chunks back to back and
// two chunk buffers per matrix (charged) double-buffer it: chunk k is written, or chunk k + 1
// read, by the buffer's own thread (task_thread.h) while the caller works on the next or current
// one (AIRES's phase II/III overlap, for the intermediates). A float32 chunk travels without its
// zero values when that moves fewer 4 KiB units (bytes, on a file without direct I/O)
// (zero_elision.h: a hidden layer's ReLU and dropout zero most of it), coded in place by the
// helper and decoded by it too (in its buffer, or in the caller's rows for Load), or, in a pass
// begun for ReadInto, by the caller's threads straight into the caller's rows; a bit per value
// charged beside each buffer; the file keeps each chunk's full-size slot. The file is unlinked from
// the start (O_TMPFILE), so nothing is left behind however the process ends, and its space is
// reserved when it is made, so a full disk is one error before training rather than a failure
// mid-epoch.
//
// Invariants: Write only inside BeginWrite/EndWrite, and Read (or ReadInto, in a pass begun for
// it; never both in one pass) only inside BeginRead/EndRead; a write pass's pieces cover
// [0, rows) in order (checked: an internal error otherwise); a read pass returns what the last
// completed write pass wrote; a failed read or write (EIO, ENOSPC) throws strata::Error naming
// the matrix and the scratch directory, once every transfer still in flight has finished, so no
// helper writes into a buffer, or into the caller's rows, after the call returns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/task_thread.h"
#include "fullgraph/zero_elision.h"
#include "nn/matrix.h"
#include "storage/aligned_buffer.h"
#include "storage/scratch_file.h"
#include "strata/memory_budget.h"

namespace strata {

struct IntermediateStats {
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t reads = 0;   // chunks read
  uint64_t writes = 0;  // chunks written
  double wait_s = 0;    // the caller waiting for a chunk's transfer

  IntermediateStats& operator+=(const IntermediateStats& other) {
    bytes_read += other.bytes_read;
    bytes_written += other.bytes_written;
    reads += other.reads;
    writes += other.writes;
    wait_s += other.wait_s;
    return *this;
  }
};

class IntermediateRows {
 public:
  IntermediateRows() = default;
  // In memory: rows × max_width floats. On disk (`scratch_dir` non-empty): two buffers of
  // min(rows, chunk_rows) × max_width floats and a bit per float (OnDiskBytes), and a scratch
  // file in scratch_dir reserved for the whole matrix. chunk_rows is a multiple of 1024, so every
  // chunk starts on a direct-I/O boundary. `what` names the matrix in budget and I/O errors. With
  // `half_on_disk`, the scratch file holds the rows as float16 (rounded to nearest even; half the
  // disk space and transfers), converted in place by the helper thread; chunk_rows must then be a
  // multiple of 2048 for an odd width, so that chunks fill whole 4 KiB units.
  IntermediateRows(uint64_t rows, size_t max_width, uint64_t chunk_rows,
                   const std::string& scratch_dir, MemoryBudget& budget, std::string_view what,
                   bool half_on_disk = false);
  ~IntermediateRows();
  IntermediateRows(IntermediateRows&& other) noexcept;
  IntermediateRows& operator=(IntermediateRows&& other) noexcept;

  // Bytes the in-memory and the on-disk form charge to the budget (on disk: the two buffers
  // and their zero bits).
  static uint64_t ResidentBytes(uint64_t rows, size_t max_width);
  static uint64_t OnDiskBytes(uint64_t rows, size_t max_width, uint64_t chunk_rows);

  // Starts writing a matrix of `width` <= max_width columns (stride `width`).
  void BeginWrite(size_t width);
  // Rows [begin, end) to fill: begin is the row after the last piece, end within its chunk.
  MatrixSpan<float> Write(uint64_t begin, uint64_t end);
  // Hands the last chunk to the disk and waits for every write.
  void EndWrite();

  // Starts reading what the last write pass wrote. With `into`, the pass's pieces are read by
  // ReadInto alone, and a chunk that travelled without its zeros stays coded in its buffer
  // until ReadInto expands it straight into the caller's rows (one pass over it, not two).
  void BeginRead(bool into = false);
  // Rows [begin, end) of one chunk, at or after the previous piece's chunk. The caller may
  // change them in place only in a matrix it rewrites before reading it again: in memory the
  // change stays, on disk the file keeps what was written.
  MatrixSpan<float> Read(uint64_t begin, uint64_t end);
  // Rows [begin, end) as Read finds them, written to `to` (of their shape) on up to `threads`
  // threads, in a pass begun with `into`; a coded chunk must be read whole.
  void ReadInto(uint64_t begin, uint64_t end, MatrixSpan<float> to, unsigned threads);
  // Waits for a read still in flight (a read pass may stop early).
  void EndRead();

  // A whole pass of its own, chunk by chunk: writes `rows` (rows() × its width), or reads what
  // the last write pass wrote into `rows`. On disk, Load reads each chunk straight into `rows`
  // when they are contiguous (stride = width) and each chunk's whole 4 KiB units fit there at an
  // aligned address (direct I/O's rules): no copy through the chunk buffers, which matters for
  // the propagation input's slices, loaded whole before each pass.
  void Store(MatrixSpan<const float> rows);
  void Load(MatrixSpan<float> rows);

  uint64_t rows() const { return rows_; }
  bool on_disk() const { return file_.is_open(); }
  const IntermediateStats& stats() const { return stats_; }

 private:
  // What one transfer moved, counted when it is waited for.
  struct Moved {
    uint64_t bytes = 0;
    bool write = false;
  };
  static constexpr uint64_t kWholeChunk = UINT64_MAX;  // a chunk stored with its zeros

  uint64_t ChunkOf(uint64_t row) const { return row / chunk_rows_; }
  uint64_t ChunkRows(uint64_t chunk) const;
  // The buffer of a chunk (by its parity): both buffers' floats come first, so that each
  // starts on a direct-I/O boundary, then the zero bits of each (zero_elision.h). A matrix
  // shorter than a chunk has buffers of its rows only (OnDiskBytes).
  uint64_t BufferRows() const { return std::min(rows_, chunk_rows_); }
  float* Buffer(uint64_t chunk) {
    return reinterpret_cast<float*>(buffers_.data()) + (chunk % 2) * chunk_rows_ * max_width_;
  }
  uint64_t* Masks(uint64_t chunk) {
    return reinterpret_cast<uint64_t*>(reinterpret_cast<float*>(buffers_.data()) +
                                       2 * BufferRows() * max_width_) +
           (chunk % 2) * MaskWords(BufferRows(), max_width_);
  }
  void Count(const Moved& moved);
  // Starts the transfer of `chunk` between its buffer, or `values` (its rows elsewhere, with
  // room for its whole 4 KiB units), and the file on a helper thread.
  void Start(uint64_t chunk, bool write, float* values = nullptr);
  // Where Load can read `chunk` straight into `rows`' memory: its rows there, else null.
  float* InPlace(MatrixSpan<float> rows, uint64_t chunk) const;
  // Rows [begin, end) of a read pass (Read's checks), their chunk's transfer waited for and
  // the next chunk's started.
  MatrixSpan<float> Reach(uint64_t begin, uint64_t end);
  // Waits for the transfer of the buffer `chunk` uses; rethrows its error.
  void Finish(uint64_t chunk);
  void FinishAll();       // both buffers, errors included, the first rethrown
  void DrainTransfers();  // both buffers, errors ignored (reported elsewhere, or not at all)
  // BeginRead's checks and state, no transfer started.
  void OpenRead(bool into);
  void Close();

  uint64_t rows_ = 0;
  size_t max_width_ = 0;
  uint64_t chunk_rows_ = 0;
  size_t width_ = 0;
  std::string what_;
  std::string scratch_dir_;
  ChargedArray<float> resident_;
  ScratchFile file_;
  size_t disk_value_bytes_ = sizeof(float);  // 2 with half_on_disk
  AlignedBuffer buffers_;
  std::future<Moved> transfers_[2];  // by buffer
  // By buffer: each buffer's transfers run in order on a thread of their own, the two
  // buffers' side by side.
  std::unique_ptr<TaskThread> transfer_threads_[2];
  std::vector<uint64_t> stored_nonzeros_;  // per chunk: the values it kept, or kWholeChunk
  enum class Pass { kIdle, kWriting, kReading };
  Pass pass_ = Pass::kIdle;
  bool read_into_ = false;  // the read pass is ReadInto's (BeginRead)
  uint64_t next_row_ = 0;   // writing: the next row to write
  uint64_t chunk_ = 0;      // the chunk in the caller's hands
  bool chunk_valid_ = false;
  IntermediateStats stats_;
};

}  // namespace strata
