#include "strata/io_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/random.h"
#include "storage/aligned_buffer.h"
#include "strata/error.h"
#include "strata/memory_budget.h"
#include "test_util.h"

namespace strata {
namespace {

constexpr uint64_t kFileBytes = uint64_t{8} << 20;
// Not a multiple of the block size: the last block is short.
constexpr uint64_t kTailFileBytes = kFileBytes + 1000;
constexpr uint32_t kBlock = kDirectIoAlignment;

// Byte `offset` of every test file: distinct 8-byte words, so a read from the wrong offset, a
// shifted continuation or a stale buffer never matches by accident.
std::byte ContentAt(uint64_t offset) {
  uint64_t state = offset / 8;
  uint64_t word = SplitMix64(state);
  return static_cast<std::byte>(word >> (8 * (offset % 8)));
}

// A directory removed with its contents when destroyed, made inside `base`.
class TempDirIn {
 public:
  explicit TempDirIn(const std::string& base) {
    std::string pattern = base + "/strata-io-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDirIn() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteContentFile(const std::string& path, uint64_t bytes) {
  std::vector<std::byte> data(bytes);
  for (uint64_t i = 0; i < bytes; ++i) data[i] = ContentAt(i);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  // Synced so that O_DIRECT reads find clean pages and read the disk, not write-back.
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

bool SupportsDirectIo(const std::string& dir) {
  std::string probe = dir + "/probe";
  int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return fd >= 0;
}

// Fails the test unless [buffer, buffer + length) holds the file's bytes at `offset`, with
// zeros past `file_bytes`.
::testing::AssertionResult HoldsContent(const std::byte* buffer, uint64_t offset, uint32_t length,
                                        uint64_t file_bytes) {
  for (uint32_t i = 0; i < length; ++i) {
    uint64_t at = offset + i;
    std::byte want = at < file_bytes ? ContentAt(at) : std::byte{0};
    if (buffer[i] != want) {
      return ::testing::AssertionFailure()
             << "byte " << i << " of the read at offset " << offset << " (length " << length
             << ") is " << int(buffer[i]) << ", expected " << int(want);
    }
  }
  return ::testing::AssertionSuccess();
}

// The files every test reads, written once: the scratch directory is on a file system that
// supports O_DIRECT when one can be found ($TMPDIR or /tmp may be tmpfs on kernels without
// O_DIRECT for it; the working directory, inside the build tree, usually is on disk).
class TestFiles {
 public:
  TestFiles() {
    if (SupportsDirectIo(scratch_.path())) {
      dir_ = scratch_.path();
    } else {
      local_ = std::make_unique<TempDirIn>(std::filesystem::current_path().string());
      dir_ = local_->ok() && SupportsDirectIo(local_->path()) ? local_->path() : scratch_.path();
    }
    main_ = dir_ + "/features.bin";
    tail_ = dir_ + "/tail.bin";
    WriteContentFile(main_, kFileBytes);
    WriteContentFile(tail_, kTailFileBytes);
  }
  const std::string& main() const { return main_; }
  const std::string& tail() const { return tail_; }
  const std::string& dir() const { return dir_; }

 private:
  testing::ScratchDir scratch_;
  std::unique_ptr<TempDirIn> local_;
  std::string dir_, main_, tail_;
};

const TestFiles& Files() {
  static const TestFiles files;  // written by the first test that needs them, removed at exit
  return files;
}

using Kind = IoEngineOptions::Kind;

class IoEngineTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    Files();
    if (GetParam() == Kind::kUring) {
      if (const std::string why = testing::UringUnavailableReason(); !why.empty()) {
        GTEST_SKIP() << "io_uring unavailable here: " << why;
      }
    }
  }

  std::unique_ptr<IoEngine> Make(uint32_t depth,
                                 std::function<int(const ReadRequest&, int)> hook = {},
                                 bool direct_io = true) {
    IoEngineOptions options;
    options.kind = GetParam();
    options.depth = depth;
    options.pread_threads = 4;
    options.fault_hook = std::move(hook);
    options.direct_io = direct_io;
    auto engine = MakeIoEngine(options);
    EXPECT_EQ(engine->name(), GetParam() == Kind::kUring ? "io_uring" : "pread");
    return engine;
  }

  MemoryBudget budget_{uint64_t{1} << 30};
};

struct Planned {
  ReadRequest request;
  uint64_t file_bytes;
};

// `count` block-aligned reads of 4 KiB to 64 KiB at random offsets inside `file_bytes`, each
// with its own part of `arena` (which must hold count * 64 KiB), tagged by index.
std::vector<Planned> PlanReads(int file, uint64_t file_bytes, size_t count, AlignedBuffer& arena,
                               uint64_t seed) {
  static constexpr uint32_t kLengths[] = {kBlock, kBlock, kBlock, 2 * kBlock, 16 * kBlock};
  Rng rng(seed);
  std::vector<Planned> plan;
  for (size_t i = 0; i < count; ++i) {
    uint32_t length = kLengths[rng.Below(std::size(kLengths))];
    uint64_t blocks = (file_bytes - length) / kBlock;
    ReadRequest r{file, rng.Below(blocks + 1) * kBlock, length,
                  arena.data() + i * 16 * size_t{kBlock}, i};
    plan.push_back({r, file_bytes});
  }
  return plan;
}

std::vector<ReadRequest> Requests(const std::vector<Planned>& plan) {
  std::vector<ReadRequest> reads;
  for (const Planned& p : plan) reads.push_back(p.request);
  return reads;
}

// Reaps until nothing is outstanding; checks that every tag comes back exactly once and that
// every buffer holds the right bytes.
void ReapAllAndCheck(IoEngine& engine, const std::vector<Planned>& plan) {
  std::vector<int> seen(plan.size(), 0);
  std::vector<ReadCompletion> out(17);
  while (engine.outstanding() > 0) {
    size_t n = engine.Reap(out, 1);
    ASSERT_GE(n, 1u);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LT(out[i].tag, plan.size());
      ++seen[out[i].tag];
    }
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    ASSERT_EQ(seen[i], 1) << "tag " << i;
    const ReadRequest& r = plan[i].request;
    ASSERT_TRUE(HoldsContent(r.buffer, r.offset, r.length, plan[i].file_bytes)) << "tag " << i;
  }
}

TEST_P(IoEngineTest, RandomReadsReturnExactBytesAtEveryDepth) {
  for (uint32_t depth : {1u, 7u, 64u}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    AlignedBuffer arena(budget_, 300 * 16 * size_t{kBlock}, "test");
    auto engine = Make(depth);
    int file = engine->OpenFile(Files().main());
    EXPECT_EQ(engine->depth(), depth);
    EXPECT_EQ(engine->file_size(file), kFileBytes);
    auto plan = PlanReads(file, kFileBytes, 300, arena, depth);
    // All at once: far more than the depth, so most wait inside the engine.
    engine->Submit(Requests(plan));
    EXPECT_EQ(engine->outstanding(), plan.size());
    ReapAllAndCheck(*engine, plan);
    IoEngineStats stats = engine->stats();
    EXPECT_EQ(stats.reads_issued, plan.size());
    EXPECT_EQ(stats.resubmissions, 0u);
    uint64_t bytes = 0;
    for (const Planned& p : plan) bytes += p.request.length;
    EXPECT_EQ(stats.bytes_read, bytes);
    EXPECT_EQ(stats.completed, plan.size());
    EXPECT_GT(stats.latency_ns, 0u);
  }
}

TEST_P(IoEngineTest, InterleavedSubmitAndReapKeepOutstandingExact) {
  constexpr size_t kReads = 600;
  AlignedBuffer arena(budget_, kReads * 16 * size_t{kBlock}, "test");
  auto engine = Make(16);
  int file = engine->OpenFile(Files().main());
  int tail = engine->OpenFile(Files().tail());
  EXPECT_EQ(file, 0);
  EXPECT_EQ(tail, 1);
  auto plan = PlanReads(file, kFileBytes, kReads, arena, 7);
  // Every third read goes to the second file (same content, other handle).
  for (size_t i = 0; i < plan.size(); i += 3) plan[i].request.file = tail;
  Rng rng(11);
  std::vector<int> seen(kReads, 0);
  std::vector<ReadCompletion> out(64);
  size_t submitted = 0, reaped = 0;
  while (reaped < kReads) {
    size_t k = std::min<size_t>(rng.Below(40), kReads - submitted);
    std::vector<ReadRequest> batch;
    for (size_t i = 0; i < k; ++i) batch.push_back(plan[submitted + i].request);
    engine->Submit(batch);
    submitted += k;
    ASSERT_EQ(engine->outstanding(), submitted - reaped);
    size_t min_complete = rng.Below(engine->outstanding() + 1);
    size_t n = engine->Reap(out, min_complete);
    ASSERT_GE(n, std::min(min_complete, out.size()));
    for (size_t i = 0; i < n; ++i) ++seen[out[i].tag];
    reaped += n;
    ASSERT_EQ(engine->outstanding(), submitted - reaped);
  }
  for (size_t i = 0; i < kReads; ++i) {
    ASSERT_EQ(seen[i], 1) << "tag " << i;
    const ReadRequest& r = plan[i].request;
    ASSERT_TRUE(HoldsContent(r.buffer, r.offset, r.length, kFileBytes)) << "tag " << i;
  }
  // Nothing outstanding: Reap returns at once.
  EXPECT_EQ(engine->Reap(out, 10), 0u);
}

TEST_P(IoEngineTest, ShortReadsAreContinuedToExactBytes) {
  // Always half (at least one byte): a 64 KiB read takes 17 attempts, most of them ending
  // mid-block, which O_DIRECT cannot continue.
  auto engine =
      Make(8, [](const ReadRequest&, int result) { return result > 1 ? result / 2 : result; });
  int file = engine->OpenFile(Files().main());
  int tail = engine->OpenFile(Files().tail());
  AlignedBuffer arena(budget_, 81 * 16 * size_t{kBlock}, "test");
  auto plan = PlanReads(file, kFileBytes, 80, arena, 3);
  // The last block of the tail file: short at the end of file as well.
  plan.push_back(
      {ReadRequest{tail, kFileBytes, 2 * kBlock, arena.data() + 80 * 16 * size_t{kBlock}, 80},
       kTailFileBytes});
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
  EXPECT_GT(engine->stats().resubmissions, 80u);
}

TEST_P(IoEngineTest, EagainAndEintrAreRetriedToExactBytes) {
  int attempts = 0;
  auto engine = Make(8, [&](const ReadRequest&, int result) {
    ++attempts;
    if (attempts % 3 != 0) return result;
    return attempts % 2 == 0 ? -EAGAIN : -EINTR;
  });
  int file = engine->OpenFile(Files().main());
  AlignedBuffer arena(budget_, 200 * 16 * size_t{kBlock}, "test");
  auto plan = PlanReads(file, kFileBytes, 200, arena, 5);
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
  IoEngineStats stats = engine->stats();
  EXPECT_EQ(stats.reads_issued, static_cast<uint64_t>(attempts));
  EXPECT_EQ(stats.resubmissions, stats.reads_issued - plan.size());
  EXPECT_EQ(stats.resubmissions, stats.reads_issued / 3);
}

TEST_P(IoEngineTest, EioMakesReapThrowNamingPathAndOffsetOnce) {
  auto engine = Make(
      8, [](const ReadRequest& attempt, int result) { return attempt.tag == 7 ? -EIO : result; });
  int file = engine->OpenFile(Files().main());
  AlignedBuffer arena(budget_, 50 * 16 * size_t{kBlock}, "test");
  auto plan = PlanReads(file, kFileBytes, 50, arena, 9);
  engine->Submit(Requests(plan));
  std::vector<ReadCompletion> out(50);
  size_t completed = 0, errors = 0;
  while (engine->outstanding() > 0) {
    try {
      size_t n = engine->Reap(out, 1);
      for (size_t i = 0; i < n; ++i) EXPECT_NE(out[i].tag, 7u);
      completed += n;
    } catch (const Error& e) {
      ++errors;
      std::string message = e.what();
      EXPECT_NE(message.find(Files().main()), std::string::npos) << message;
      EXPECT_NE(message.find("offset " + std::to_string(plan[7].request.offset)), std::string::npos)
          << message;
      EXPECT_NE(message.find(std::strerror(EIO)), std::string::npos) << message;
      EXPECT_EQ(e.kind(), Error::Kind::kInternal);
    }
  }
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(completed, 49u);
  // The engine goes on working after a failed read.
  std::vector<Planned> again(plan.begin(), plan.begin() + 5);
  engine->Submit(Requests(again));
  ReapAllAndCheck(*engine, again);
}

TEST_P(IoEngineTest, DestructionWithReadsInFlightWaitsForThem) {
  constexpr size_t kReads = 2000;
  AlignedBuffer arena(budget_, kReads * 16 * size_t{kBlock}, "test");
  for (bool fail : {false, true}) {
    std::function<int(const ReadRequest&, int)> hook;
    if (fail) hook = [](const ReadRequest& a, int result) { return a.tag == 3 ? -EIO : result; };
    auto engine = Make(64, hook);
    int file = engine->OpenFile(Files().main());
    auto plan = PlanReads(file, kFileBytes, kReads, arena, 13);
    engine->Submit(Requests(plan));
    if (fail) {
      std::vector<ReadCompletion> out(8);
      EXPECT_THROW(while (engine->outstanding() > 0) engine->Reap(out, 8), Error);
    }
    engine.reset();
    // Nothing may land in the buffers once the engine is gone.
    std::memset(arena.data(), 0xEE, arena.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (size_t i = 0; i < arena.size(); i += 512) {
      ASSERT_EQ(arena.data()[i], std::byte{0xEE}) << "byte " << i;
    }
  }
}

TEST_P(IoEngineTest, ReadsPastEndOfFileAreZeroFilledAndReadsBeyondItFail) {
  auto engine = Make(4);
  int tail = engine->OpenFile(Files().tail());
  EXPECT_EQ(engine->file_size(tail), kTailFileBytes);
  AlignedBuffer arena(budget_, 4 * kBlock, "test");
  std::memset(arena.data(), 0xAB, arena.size());
  std::vector<Planned> plan = {
      // The short last block alone, and the last whole block with it.
      {ReadRequest{tail, kFileBytes, kBlock, arena.data(), 0}, kTailFileBytes},
      {ReadRequest{tail, kFileBytes - kBlock, 2 * kBlock, arena.data() + kBlock, 1},
       kTailFileBytes},
  };
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
  EXPECT_EQ(engine->stats().bytes_read, 1000u + kBlock + 1000u);

  ReadRequest beyond{tail, kFileBytes + kBlock, kBlock, arena.data() + 3 * kBlock, 2};
  engine->Submit({&beyond, 1});
  std::vector<ReadCompletion> out(1);
  try {
    engine->Reap(out, 1);
    ADD_FAILURE() << "a read starting past the end of the file completed";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    EXPECT_NE(message.find(Files().tail()), std::string::npos) << message;
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
  }
  EXPECT_EQ(engine->outstanding(), 0u);
}

TEST_P(IoEngineTest, BufferedReadsReturnTheSameBytesAndAllowAnyAlignment) {
  auto engine = Make(8, {}, /*direct_io=*/false);
  int file = engine->OpenFile(Files().main());
  EXPECT_FALSE(engine->direct(file));
  AlignedBuffer arena(budget_, 101 * 16 * size_t{kBlock}, "test");
  auto plan = PlanReads(file, kFileBytes, 100, arena, 17);
  // Buffered files take reads at any offset, of any length, into any address.
  plan.push_back({ReadRequest{file, 12345, 777, arena.data() + 100 * 16 * size_t{kBlock} + 3, 100},
                  kFileBytes});
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
}

TEST_P(IoEngineTest, FileSystemWithoutDirectIoFallsBackToBufferedReads) {
  // tmpfs refused O_DIRECT until Linux 6.6; on newer kernels there may be no such file system.
  TempDirIn shm("/dev/shm");
  if (!shm.ok()) GTEST_SKIP() << "no /dev/shm";
  if (SupportsDirectIo(shm.path())) GTEST_SKIP() << "tmpfs supports O_DIRECT on this kernel";
  std::string path = shm.path() + "/features.bin";
  WriteContentFile(path, kTailFileBytes);
  auto engine = Make(8);
  int file = engine->OpenFile(path);
  EXPECT_FALSE(engine->direct(file));
  AlignedBuffer arena(budget_, 100 * 16 * size_t{kBlock}, "test");
  auto plan = PlanReads(file, kTailFileBytes, 100, arena, 19);
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
}

// Where the file system takes direct reads at sector alignment, a read at a sector that is not
// the start of a 4 KiB block is still a direct read: it must not fill the page cache.
TEST_P(IoEngineTest, SectorAlignedDirectReadsBypassThePageCache) {
  testing::ScratchDir dir;
  const std::string path = dir / "sectors.bin";
  WriteContentFile(path, kFileBytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fsync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  auto engine = Make(8);
  const int file = engine->OpenFile(path);
  const uint32_t sector = engine->read_alignment(file);
  if (!engine->direct(file) || sector == kBlock) {
    ::close(fd);
    GTEST_SKIP() << "direct reads here are whole blocks";
  }
  void* map = ::mmap(nullptr, kFileBytes, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  std::vector<unsigned char> resident(kFileBytes / kBlock);
  ASSERT_EQ(::mincore(map, kFileBytes, resident.data()), 0);
  if (std::any_of(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; })) {
    ::munmap(map, kFileBytes);
    ::close(fd);
    GTEST_SKIP() << "the file's pages could not be dropped from the page cache";
  }
  constexpr size_t kReads = 64;
  AlignedBuffer arena(budget_, kReads * kBlock, "test");
  std::vector<Planned> plan;
  for (size_t i = 0; i < kReads; ++i) {
    const uint64_t offset = (i * 7 % (kFileBytes / kBlock)) * kBlock + sector;
    plan.push_back({ReadRequest{file, offset, sector, arena.data() + i * kBlock, i}, kFileBytes});
  }
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
  ASSERT_EQ(::mincore(map, kFileBytes, resident.data()), 0);
  ::munmap(map, kFileBytes);
  ::close(fd);
  for (size_t i = 0; i < kReads; ++i) {
    EXPECT_FALSE(resident[plan[i].request.offset / kBlock] & 1)
        << "the read at " << plan[i].request.offset << " went through the page cache";
  }
}

TEST_P(IoEngineTest, RegisteredArenaReadsReturnExactBytes) {
  AlignedBuffer arena(budget_, 64 * 16 * size_t{kBlock}, "test");
  auto engine = Make(16);
  int file = engine->OpenFile(Files().main());
  engine->RegisterBuffer(arena.span());
  auto plan = PlanReads(file, kFileBytes, 64, arena, 23);
  // One read outside the arena: unregistered reads must still work beside fixed ones.
  AlignedBuffer other(budget_, kBlock, "test");
  plan.push_back({ReadRequest{file, 5 * kBlock, kBlock, other.data(), 64}, kFileBytes});
  engine->Submit(Requests(plan));
  ReapAllAndCheck(*engine, plan);
  // Registering again (a new arena) is allowed while nothing is outstanding.
  engine->RegisterBuffer(other.span());
  std::vector<Planned> again = {plan.back()};
  again[0].request.tag = 0;
  engine->Submit(Requests(again));
  ReapAllAndCheck(*engine, again);
}

TEST_P(IoEngineTest, RefusedRegistrationFallsBackToUnregisteredReads) {
  // An arena whose last page cannot be pinned (PROT_NONE): the kernel refuses to register it,
  // deterministically and without pinning anything, as it would past RLIMIT_MEMLOCK.
  size_t bytes = 4 * kBlock;
  void* mapping =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  auto* arena = static_cast<std::byte*>(mapping);
  ASSERT_EQ(::mprotect(arena + 3 * kBlock, kBlock, PROT_NONE), 0);
  {
    auto engine = Make(4);
    int file = engine->OpenFile(Files().main());
    engine->RegisterBuffer({arena, bytes});
    EXPECT_FALSE(engine->buffer_registered());
    std::vector<Planned> plan = {
        {ReadRequest{file, 0, 2 * kBlock, arena, 0}, kFileBytes},
        {ReadRequest{file, 100 * kBlock, kBlock, arena + 2 * kBlock, 1}, kFileBytes}};
    engine->Submit(Requests(plan));
    ReapAllAndCheck(*engine, plan);
  }
  ::munmap(mapping, bytes);
}

TEST_P(IoEngineTest, RejectsBadRequestsBeforeQueuingAny) {
  auto engine = Make(4);
  int file = engine->OpenFile(Files().main());
  AlignedBuffer arena(budget_, 2 * kBlock, "test");
  ReadRequest good{file, 0, kBlock, arena.data(), 0};
  std::vector<ReadRequest> bad_ones = {
      {file + 5, 0, kBlock, arena.data(), 1},  // no such file
      {file, 0, 0, arena.data(), 1},           // empty
      {file, 0, kBlock, nullptr, 1},           // no buffer
  };
  const uint32_t alignment = engine->read_alignment(file);
  EXPECT_EQ(kDirectIoAlignment % alignment, 0u);
  if (engine->direct(file)) {
    bad_ones.push_back({file, alignment / 2, kBlock, arena.data(), 1});  // offset
    bad_ones.push_back({file, 0, 1000, arena.data(), 1});                // length
    bad_ones.push_back({file, 0, kBlock, arena.data() + 512, 1});        // buffer
  }
  for (const ReadRequest& bad : bad_ones) {
    std::vector<ReadRequest> batch = {good, bad};
    try {
      engine->Submit(batch);
      ADD_FAILURE() << "accepted a read of " << bad.length << " bytes at " << bad.offset;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInternal) << e.what();
    }
    EXPECT_EQ(engine->outstanding(), 0u);
  }
  EXPECT_THROW(engine->OpenFile(Files().dir() + "/missing.bin"), Error);
  EXPECT_THROW(engine->OpenFile(Files().dir()), Error);
}

INSTANTIATE_TEST_SUITE_P(IoEngine, IoEngineTest, ::testing::Values(Kind::kUring, Kind::kPread),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return info.param == Kind::kUring ? "uring" : "pread";
                         });

TEST(IoEngine, EnvironmentForcesThePreadEngineOnlyForAuto) {
  const char* old = std::getenv("STRATA_IO_ENGINE");
  std::string saved = old ? old : "";
  ::setenv("STRATA_IO_ENGINE", "pread", 1);
  IoEngineOptions options;
  options.depth = 4;
  EXPECT_EQ(MakeIoEngine(options)->name(), "pread");
  ::setenv("STRATA_IO_ENGINE", "bogus", 1);
  EXPECT_THROW(MakeIoEngine(options), Error);
  if (old) {
    ::setenv("STRATA_IO_ENGINE", saved.c_str(), 1);
  } else {
    ::unsetenv("STRATA_IO_ENGINE");
  }
  options.kind = Kind::kPread;
  EXPECT_EQ(MakeIoEngine(options)->name(), "pread");
  options.depth = 0;
  EXPECT_THROW(MakeIoEngine(options), Error);
}

TEST(IoEngine, AlignedBufferIsAlignedAndChargedForItsLifetime) {
  MemoryBudget budget(1 << 20);
  {
    AlignedBuffer buffer(budget, 5000, "test buffer");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kDirectIoAlignment, 0u);
    EXPECT_EQ(buffer.size(), 2 * size_t{kDirectIoAlignment});
    EXPECT_EQ(budget.used(), buffer.size());
    AlignedBuffer moved = std::move(buffer);
    EXPECT_EQ(buffer.data(), nullptr);
    EXPECT_EQ(budget.used(), moved.size());
  }
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_THROW(AlignedBuffer(budget, 2 << 20, "too big"), Error);
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace strata
