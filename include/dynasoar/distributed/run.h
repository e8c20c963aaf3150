// Starting the ranks of a distributed model.
//
// - One process, every rank a thread: run_ranks(n, f) starts n threads and
//   calls f(Communicator&) on each. In a CUDA build rank r drives GPU
//   r % (number of GPUs) over NCCL; in a host build the ranks talk through
//   host threads (host_transport.h), each with a heap of its own.
// - One process per rank: started by the launcher (tools/launch), which sets
//   DYNASOAR_RANK, DYNASOAR_RANKS and DYNASOAR_RENDEZVOUS; run_ranks then
//   runs f once, as that rank (CUDA builds; see nccl_transport.h).
//
// Failure: a rank whose f throws aborts the communicator, so the others'
// operations throw within the time limit instead of waiting for it; the
// first error (the cause, not the aborts it set off) is rethrown once every
// rank has ended.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dynasoar/distributed/communicator.h"
#include "dynasoar/distributed/host_transport.h"
#include "dynasoar/distributed/transport.h"

#if DYNASOAR_CUDA && DYNASOAR_NCCL
#include "dynasoar/distributed/nccl_transport.h"
#endif

namespace dynasoar::distributed {

namespace detail {

// The message of an exception, for the abort it sets off.
inline std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is no std::exception";
  }
}

// Runs f(Communicator&) on `ranks` threads, each over make(rank)'s
// transport; aborts the world through `abort` when one fails.
template <class Make, class Finish, class F>
void run_threads(int ranks, Make&& make, Finish&& finish, F& f) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::mutex first_mutex;
  int first = -1;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      const auto record = [&](const std::exception_ptr& e) {
        std::lock_guard<std::mutex> lock(first_mutex);
        errors[static_cast<std::size_t>(r)] = e;
        if (first < 0) first = r;
      };
      std::unique_ptr<Transport> transport;
      try {
        transport = make(r);
        Communicator comm(std::move(transport));
        try {
          f(comm);
        } catch (...) {
          // Recorded before the abort: the errors the abort sets off on
          // the other ranks must not come first.
          const std::exception_ptr e = std::current_exception();
          record(e);
          comm.abort("rank " + std::to_string(r) + " failed: " + what_of(e));
        }
      } catch (...) {
        record(std::current_exception());
      }
      finish(r);
    });
  for (std::thread& t : threads) t.join();
  if (first >= 0) std::rethrow_exception(errors[static_cast<std::size_t>(first)]);
}

}  // namespace detail

/// GPUs this process sees (ranks that run_ranks can place, one per GPU);
/// 0 in a host build, whose ranks are threads.
inline int visible_gpus() {
#if DYNASOAR_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

/// Whether this process is one rank started by the launcher (DYNASOAR_RANK is set).
inline bool launched_as_rank() {
  const char* r = std::getenv("DYNASOAR_RANK");
  return r != nullptr && *r != '\0';
}

/// Runs f(Communicator&) once per rank, each rank on a thread of this
/// process (`ranks` of them), or, where the launcher started this process
/// as one rank, once as that rank (then `ranks` must be 1 or the launcher's
/// number of ranks). Returns when every rank has returned; rethrows the
/// first error of a rank. Throws std::invalid_argument for ranks < 1.
template <class F>
void run_ranks(int ranks, F&& f) {
  if (ranks < 1) throw std::invalid_argument("run_ranks: at least one rank, not " + std::to_string(ranks));
#if DYNASOAR_CUDA && DYNASOAR_NCCL
  if (launched_as_rank()) {
    run_launched_rank(ranks, f);
    return;
  }
  NcclWorld world(ranks);
  detail::run_threads(
      ranks, [&](int r) { return world.transport(r); }, [&](int r) { world.finish(r); }, f);
#else
  if (launched_as_rank())
    throw std::invalid_argument(
        "run_ranks: this process was started by the launcher as one rank, but this build has no "
        "NCCL transport (a host build runs its ranks as threads of one process: give the number of "
        "ranks to the program instead)");
  HostWorld world(ranks);
  detail::run_threads(
      ranks, [&](int r) { return std::make_unique<HostTransport>(world, r); },
      [&](int r) { world.finish(r); }, f);
#endif
}

}  // namespace dynasoar::distributed
