// MpiCollective is the Collective of a job started by an MPI launcher (mpirun, srun): it
// initialises MPI for the process's life (the training step's thread makes every MPI call, so
// MPI_THREAD_FUNNELED is enough), sums with MPI_Iallreduce and MPI_Allreduce over
// MPI_COMM_WORLD, and broadcasts with MPI_Bcast.
//
// A rank that fails cannot finalise MPI: the others would wait in their next sum forever.
// Abort ends every rank of the job (MPI_Abort) with the given status instead.
//
// Invariants: at most one per process, constructed only when Launched(); StartSum's spans stay
// valid until WaitAll.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "strata/collective.h"

namespace strata {

class MpiCollective final : public Collective {
 public:
  // Whether an MPI launcher started this process: its environment names a world (Open MPI's
  // OMPI_COMM_WORLD_SIZE, or the PMI/PMIx variables of MPICH and Slurm).
  static bool Launched();

  // MPI_Init_thread; throws an internal error when MPI cannot give MPI_THREAD_FUNNELED.
  MpiCollective();
  // MPI_Finalize, after every rank has arrived (a barrier): only on the success path.
  ~MpiCollective() override;
  MpiCollective(const MpiCollective&) = delete;
  MpiCollective& operator=(const MpiCollective&) = delete;

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  void StartSum(std::span<float> values) override;
  void Progress() override;
  void WaitAll() override;
  void Sum(std::span<double> values) override;
  void Broadcast(std::span<std::byte> bytes, uint32_t root) override;

  // Ends every rank of the job with `status`; does not return.
  [[noreturn]] void Abort(int status);

 private:
  uint32_t rank_ = 0;
  uint32_t size_ = 1;
  std::vector<MPI_Request> pending_;
};

}  // namespace strata
