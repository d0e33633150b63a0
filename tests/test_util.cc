#include "test_util.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "strata/error.h"
#include "strata/io_engine.h"

namespace strata::testing {

ScratchDir::ScratchDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/strata-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

std::string DrainFd(int fd) {
  std::string text;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, const RunLimits& limits) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  std::vector<std::string> copies = argv;
  std::vector<char*> exec_argv;
  for (auto& a : copies) exec_argv.push_back(a.data());
  exec_argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (limits.max_file_bytes != 0) {
      struct rlimit limit = {limits.max_file_bytes, limits.max_file_bytes};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      ::signal(SIGXFSZ, SIG_IGN);
    }
    uid_t uid = static_cast<uid_t>(limits.run_as_uid);
    if (limits.run_as_uid >= 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0)) {
      ::_exit(126);
    }
    ::execvp(exec_argv[0], exec_argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CommandResult result;
  // The killer is stopped before the child is reaped, so its kill can only reach the child
  // (running, or a zombie once it has exited), never a process that reused the pid.
  std::mutex mutex;
  std::condition_variable exited;
  bool done = false;
  std::thread killer;
  if (limits.kill_after_s > 0) {
    killer = std::thread([&] {
      std::unique_lock lock(mutex);
      if (!exited.wait_for(lock, std::chrono::duration<double>(limits.kill_after_s),
                           [&] { return done; })) {
        ::kill(pid, SIGKILL);
      }
    });
  }
  std::thread err_reader([&] { result.err = DrainFd(err_pipe[0]); });
  result.out = DrainFd(out_pipe[0]);
  err_reader.join();
  if (killer.joinable()) {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    exited.notify_one();
    killer.join();
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult RunStrata(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {STRATA_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

GenerateOptions SmallGraph(const std::string& out, uint64_t nodes, uint64_t feature_dim,
                           uint32_t classes, double avg_degree, uint64_t seed) {
  GenerateOptions o;
  o.out = out;
  o.nodes = nodes;
  o.avg_degree = avg_degree;
  o.feature_dim = feature_dim;
  o.classes = classes;
  o.seed = seed;
  o.memory_budget_bytes = uint64_t{64} << 20;
  return o;
}

std::string UringUnavailableReason() {
  IoEngineOptions probe;
  probe.kind = IoEngineOptions::Kind::kUring;
  probe.depth = 4;
  try {
    MakeIoEngine(probe);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

}  // namespace strata::testing
