// Helpers for the end-to-end CLI tests: small .npy fixtures, reading a published dataset's
// files back, running commands other than strata (sh, unshare), and the checks every failing
// command must pass (exit 2, one "strata: error: " line, nothing left beside the inputs).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dataset/csc_reference.h"
#include "strata/dataset.h"
#include "strata/npy.h"
#include "test_util.h"

namespace strata::testing {

// A JSON-lines file (a --metrics-out log), one object per line.
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <typename T>
std::vector<T> ReadArrayFile(const std::string& path) {
  std::string bytes = ReadFileBytes(path);
  if (bytes.size() % sizeof(T) != 0) throw std::runtime_error("odd size: " + path);
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

inline void WriteInt64Npy(const std::string& path, std::vector<uint64_t> shape,
                          const std::vector<int64_t>& values) {
  WriteNpy(path, NpyDtype::kInt64, shape, values.data());
}

inline void WriteFloat32Npy(const std::string& path, std::vector<uint64_t> shape,
                            const std::vector<float>& values) {
  WriteNpy(path, NpyDtype::kFloat32, shape, values.data());
}

// Edges as two parallel id arrays (row 0 and row 1 of edge_index).
struct EdgeArrays {
  std::vector<int64_t> src, dst;
  size_t size() const { return src.size(); }
};

inline void WriteEdgeIndexNpy(const std::string& path, const EdgeArrays& edges) {
  std::vector<int64_t> flat = edges.src;
  flat.insert(flat.end(), edges.dst.begin(), edges.dst.end());
  WriteInt64Npy(path, {2, edges.size()}, flat);
}

// The small graph of the fixtures: 6 nodes, 20 edges with one repeated pair (3 -> 4 appears
// at columns 2 and 19) and no self loops, so 19 distinct directed pairs.
inline constexpr uint64_t kSmallNodes = 6;
inline constexpr uint64_t kSmallDim = 3;
inline constexpr uint64_t kSmallDistinctEdges = 19;

inline EdgeArrays SmallEdges() {
  EdgeArrays e;
  e.src = {0, 1, 3, 2, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 3};
  e.dst = {1, 2, 4, 3, 5, 0, 2, 3, 4, 5, 0, 1, 3, 4, 5, 0, 1, 2, 4, 4};
  return e;
}

inline std::vector<float> SmallFeatures(uint64_t rows = kSmallNodes) {
  std::vector<float> values;
  for (uint64_t i = 0; i < rows * kSmallDim; ++i) values.push_back(0.25f * i - 1.0f);
  return values;
}

// Writes a complete, valid .npy input directory for the small graph; tests break one file.
inline void WriteSmallNpyDir(const std::string& dir, const EdgeArrays& edges = SmallEdges()) {
  std::filesystem::create_directories(dir);
  WriteEdgeIndexNpy(dir + "/edge_index.npy", edges);
  WriteFloat32Npy(dir + "/features.npy", {kSmallNodes, kSmallDim}, SmallFeatures());
  WriteInt64Npy(dir + "/labels.npy", {kSmallNodes}, {0, 1, 2, 0, 1, -1});
  WriteInt64Npy(dir + "/train_idx.npy", {2}, {0, 1});
  WriteInt64Npy(dir + "/val_idx.npy", {1}, {2});
  WriteInt64Npy(dir + "/test_idx.npy", {2}, {3, 4});
}

// The same edges as a text edge list, one "src dst" per line.
inline std::string EdgeListText(const EdgeArrays& edges) {
  std::string text;
  for (size_t i = 0; i < edges.size(); ++i) {
    text += std::to_string(edges.src[i]) + " " + std::to_string(edges.dst[i]) + "\n";
  }
  return text;
}

// The CSC a correct import must produce: for each destination, its sorted distinct sources.
inline Csc ReferenceCsc(uint64_t num_nodes, const EdgeArrays& edges, bool undirected,
                        bool self_loops) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs;  // (src, dst)
  for (size_t i = 0; i < edges.size(); ++i) {
    const auto s = static_cast<uint64_t>(edges.src[i]), d = static_cast<uint64_t>(edges.dst[i]);
    pairs.emplace_back(s, d);
    if (undirected) pairs.emplace_back(d, s);
  }
  return ReferenceCsc(std::move(pairs), num_nodes, /*deduplicate=*/true, self_loops);
}

// Reads graph/indptr.bin and graph/indices.bin of a published dataset, whatever its id width.
inline Csc ReadCsc(const std::string& dataset) {
  return ReadCscFiles(dataset + "/graph/indptr.bin", dataset + "/graph/indices.bin",
                      Dataset::Open(dataset).meta().node_id_bytes);
}

inline std::vector<std::string> SortedEntries(const std::string& dir) {
  std::vector<std::string> names = ListDirectory(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// A failed command: exit status 2 and exactly one stderr line, "strata: error: ...", that
// contains every one of `fragments` (file names, positions, what went wrong).
inline void ExpectInputError(const CommandResult& result,
                             const std::vector<std::string>& fragments) {
  EXPECT_EQ(result.exit_status, 2) << "stderr: " << result.err << "\nstdout: " << result.out;
  const std::string& err = result.err;
  EXPECT_EQ(err.rfind("strata: error: ", 0), 0u) << "stderr: " << err;
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.back(), '\n') << "stderr: " << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "stderr is not one line: " << err;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(err.find(fragment), std::string::npos)
        << "stderr lacks '" << fragment << "': " << err;
  }
}

// `dir` holds exactly `names` (the inputs): no output and no "OUT.strata-tmp-*" sibling.
inline void ExpectOnlyEntries(const std::string& dir, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  EXPECT_EQ(SortedEntries(dir), names) << "unexpected entries left in " << dir;
}

// RunCommand with the limits as arguments, as the CLI tests spell them.
inline CommandResult RunProgram(const std::vector<std::string>& args, uint64_t max_file_bytes = 0,
                                int run_as_uid = -1) {
  return RunCommand(args, {.max_file_bytes = max_file_bytes, .run_as_uid = run_as_uid});
}

// RunStrata with every written file capped at `max_file_bytes` (see RunLimits).
inline CommandResult RunStrataWithFileLimit(std::vector<std::string> args,
                                            uint64_t max_file_bytes) {
  args.insert(args.begin(), STRATA_BINARY);
  return RunCommand(args, {.max_file_bytes = max_file_bytes});
}

// Whether this process may mount a tmpfs in a private mount namespace (root, or a
// user-namespace-capable unshare); the disk-full tests need it.
// Permission tests: mode bits stop everyone but root, so as root the program runs as `nobody`.
inline constexpr int kNobody = 65534;

// Lets `nobody` traverse and write every directory under `dir`.
inline void OpenUpForNobody(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::permissions(dir, fs::perms::all);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_directory()) fs::permissions(entry.path(), fs::perms::all);
  }
}

// RunStrata, as `nobody` when this process is root (exit status 126 if the switch fails).
inline CommandResult RunStrataUnprivileged(std::vector<std::string> args) {
  if (::geteuid() != 0) return RunStrata(args);
  args.insert(args.begin(), STRATA_BINARY);
  return RunProgram(args, 0, kNobody);
}

inline bool CanMountPrivateTmpfs(const std::string& mount_point, std::string* why) {
  CommandResult probe =
      RunProgram({"unshare", "-m", "sh", "-c",
                  "mount -t tmpfs -o size=2m tmpfs \"$1\" && echo mounted", "sh", mount_point});
  *why = probe.err;
  return probe.exit_status == 0 && probe.out.find("mounted") != std::string::npos;
}

// Runs `strata ARGS...` with a 2 MiB tmpfs mounted at `mount_point` in a private mount
// namespace; "$1" in `args` stands for the mount point. Returns strata's stderr and exit
// status, and in `left` what remained in the tmpfs after strata exited (listed from inside the
// namespace, since the mount goes away with it).
inline CommandResult RunStrataInTinyTmpfs(const std::string& mount_point, const std::string& args,
                                          std::string* left) {
  const std::string script =
      "mount -t tmpfs -o size=2m tmpfs \"$1\" || exit 99\n"
      "\"$2\" " +
      args +
      "\n"
      "echo \"strata-exit=$?\"\n"
      "echo left:\n"
      "ls -A \"$1\"\n"
      "echo end\n";
  CommandResult shell =
      RunProgram({"unshare", "-m", "sh", "-c", script, "sh", mount_point, STRATA_BINARY});
  CommandResult result;
  result.err = shell.err;
  result.exit_status = -1;
  size_t at = shell.out.find("strata-exit=");
  if (shell.exit_status == 0 && at != std::string::npos) {
    result.exit_status = std::stoi(shell.out.substr(at + 12));
  }
  size_t begin = shell.out.find("left:\n"), end = shell.out.find("end\n");
  *left = begin != std::string::npos && end != std::string::npos && end >= begin + 6
              ? shell.out.substr(begin + 6, end - begin - 6)
              : "(no listing: " + shell.out + ")";
  return result;
}

// True when every file in `a` has the same size and xxh64 in `b`, and the lists match.
inline bool SameDigests(const DatasetMeta& a, const DatasetMeta& b) {
  if (a.files.size() != b.files.size()) return false;
  for (const auto& [name, digest] : a.files) {
    auto it = b.files.find(name);
    if (it == b.files.end()) return false;
    if (it->second.bytes != digest.bytes || it->second.xxh64 != digest.xxh64) return false;
  }
  return true;
}

}  // namespace strata::testing
