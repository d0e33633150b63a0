// Collective is how the processes of a data-parallel run (`mpirun -np N strata train`) combine
// what each computed: sums over the ranks, element by element, either started without waiting
// (so that a layer's gradients travel while the layers below it still run backward) or
// finished at once, and copies of one rank's bytes to every rank. Train() takes one; without
// it a run is one process. The MPI implementation is src/mpi/mpi_collective.h; the library
// itself, and so the Python package, does not link MPI.
//
// Invariants: every rank makes the same calls, in the same order, with the same sizes (a rank
// that cannot, because it failed, ends the whole job instead); a sum's result is the same on
// every rank, so ranks that apply the same summed gradients keep the same parameters (Train
// checks that after each epoch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace strata {

class Collective {
 public:
  virtual ~Collective() = default;

  // This process's rank, from 0, and the number of ranks.
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;

  // Starts summing `values` over the ranks, in place. The span stays untouched by the caller
  // until WaitAll returns.
  virtual void StartSum(std::span<float> values) = 0;
  // Lets the sums started so far advance without waiting for them (MPI moves a transfer only
  // inside its calls); cheap, for between two layers' backward.
  virtual void Progress() = 0;
  // Finishes every sum started.
  virtual void WaitAll() = 0;

  // Sums `values` over the ranks, in place, waiting.
  virtual void Sum(std::span<double> values) = 0;
  // Copies rank `root`'s `bytes` to every rank's (of the same size).
  virtual void Broadcast(std::span<std::byte> bytes, uint32_t root) = 0;
};

}  // namespace strata
