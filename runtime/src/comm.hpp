// comm.hpp - this process's place in a distributed run: the communication
// backend plugin (comm_plugin.h), loaded with dlopen on first need and
// shared by every model of the process.
#ifndef MODELC_RUNTIME_COMM_HPP
#define MODELC_RUNTIME_COMM_HPP

#include "modelc/comm_plugin.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace modelc::detail {

class Communicator {
public:
  /// Joins the run through backend `backend` ("mpi"): the process's one
  /// communicator, opened by the first call and kept until the process
  /// exits (MPI cannot be initialised twice; it is finalised at exit). An
  /// Error says why the backend could not be loaded or joined.
  static std::shared_ptr<Communicator> join(const std::string &backend);
  ~Communicator();
  /// The process's communicator, or null when it joined no run.
  static std::shared_ptr<Communicator> current();

  /// Held for the whole of a run that issues collectives: a process runs
  /// them one run at a time (the backend's calls come from one thread at
  /// a time, and each rank issues a run's collectives together).
  std::mutex &runs() { return runs_; }

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string &backend() const { return backend_; }

  /// dst = the sum of src over the ranks; false with `error` set when the
  /// backend failed or a rank did not answer within timeoutSeconds.
  bool allReduce(const float *src, float *dst, int64_t count,
                 double timeoutSeconds, std::string &error);
  /// data of rank 0 on every rank; as allReduce.
  bool broadcast(void *data, int64_t bytes, double timeoutSeconds,
                 std::string &error);
  /// Ends every rank now with `code` (the others may wait on this one).
  [[noreturn]] void abort(int code);

private:
  Communicator() = default;
  void *library_ = nullptr;
  const modelc_comm_plugin *plugin_ = nullptr;
  modelc_comm *comm_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::string backend_;
  // After a failed collective the other ranks may be gone or stuck: the
  // process leaves without MPI_Finalize (which would wait for them), and
  // mpirun ends the job.
  bool failed_ = false;
  std::mutex runs_;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_COMM_HPP
