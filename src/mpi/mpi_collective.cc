#include "mpi/mpi_collective.h"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

#include "strata/error.h"

namespace strata {
namespace {

// MPI counts are ints: larger spans go in pieces.
constexpr size_t kMaxCount = std::numeric_limits<int>::max();

void Check(int status, const char* what) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw Error::Internal(fmt::format("{} failed: {}", what, std::string_view(text, length)));
  }
}

}  // namespace

bool MpiCollective::Launched() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

MpiCollective::MpiCollective() {
  int provided = 0;
  Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_FUNNELED) {
    throw Error::Internal("MPI cannot be called from the training thread (no MPI_THREAD_FUNNELED)");
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_ = static_cast<uint32_t>(rank);
  size_ = static_cast<uint32_t>(size);
}

MpiCollective::~MpiCollective() {
  // Finalising while another rank still runs would leave it waiting: meet first.
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}

void MpiCollective::StartSum(std::span<float> values) {
  for (size_t first = 0; first < values.size(); first += kMaxCount) {
    const size_t count = std::min(kMaxCount, values.size() - first);
    MPI_Request& request = pending_.emplace_back();
    Check(MPI_Iallreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(count), MPI_FLOAT,
                         MPI_SUM, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
  }
}

void MpiCollective::Progress() {
  if (pending_.empty()) return;
  int done = 0;
  Check(MPI_Testall(static_cast<int>(pending_.size()), pending_.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
}

void MpiCollective::WaitAll() {
  Check(MPI_Waitall(static_cast<int>(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  pending_.clear();
}

void MpiCollective::Sum(std::span<double> values) {
  for (size_t first = 0; first < values.size(); first += kMaxCount) {
    const size_t count = std::min(kMaxCount, values.size() - first);
    Check(MPI_Allreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(count), MPI_DOUBLE,
                        MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
}

void MpiCollective::Broadcast(std::span<std::byte> bytes, uint32_t root) {
  for (size_t first = 0; first < bytes.size(); first += kMaxCount) {
    const size_t count = std::min(kMaxCount, bytes.size() - first);
    Check(MPI_Bcast(bytes.data() + first, static_cast<int>(count), MPI_BYTE, static_cast<int>(root),
                    MPI_COMM_WORLD),
          "MPI_Bcast");
  }
}

void MpiCollective::Abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; this is for the compiler
}

}  // namespace strata
