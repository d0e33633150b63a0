// MakeIoEngine: picks the engine, falling back from io_uring to the pread pool.
#include "strata/io_engine.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "storage/io_engine_base.h"

namespace strata {

namespace {

// io_uring_setup refuses more entries than this (IORING_MAX_ENTRIES).
constexpr uint32_t kMaxDepth = 32768;

std::atomic<bool> no_uring_said{false};

IoEngineOptions::Kind KindFromEnvironment(IoEngineOptions::Kind kind) {
  if (kind != IoEngineOptions::Kind::kAuto) return kind;
  const char* value = std::getenv("STRATA_IO_ENGINE");
  if (value == nullptr) return kind;
  std::string_view text(value);
  if (text.empty() || text == "auto") return IoEngineOptions::Kind::kAuto;
  if (text == "pread") return IoEngineOptions::Kind::kPread;
  if (text == "io_uring" || text == "uring") return IoEngineOptions::Kind::kUring;
  throw Error::Input(
      fmt::format("STRATA_IO_ENGINE is '{}'; expected auto, io_uring or pread", text));
}

}  // namespace

IoEngine::~IoEngine() = default;

std::unique_ptr<IoEngine> MakeIoEngine(const IoEngineOptions& options) {
  if (options.depth < 1 || options.depth > kMaxDepth) {
    throw Error::Input(
        fmt::format("I/O depth must be between 1 and {}, not {}", kMaxDepth, options.depth));
  }
  IoEngineOptions::Kind kind = KindFromEnvironment(options.kind);
  if (kind == IoEngineOptions::Kind::kPread) return MakePreadIoEngine(options);
  int error = 0;
  std::unique_ptr<IoEngine> engine = MakeUringIoEngine(options, &error);
  if (engine) return engine;
  if (kind == IoEngineOptions::Kind::kUring) {
    throw Error::System(fmt::format("cannot set up an io_uring of depth {}", options.depth), {},
                        error);
  }
  NoteOnce(no_uring_said, fmt::format("io_uring unavailable ({}); using the pread thread pool",
                                      std::strerror(error)));
  return MakePreadIoEngine(options);
}

void DrainDiscardingErrors(IoEngine& engine) {
  std::vector<ReadCompletion> completions(engine.depth());
  while (engine.outstanding() > 0) {
    try {
      engine.Reap(completions, engine.outstanding());
    } catch (const Error&) {
    }
  }
}

}  // namespace strata
