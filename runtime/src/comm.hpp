// comm.hpp - this process's place in a distributed run: the communication
// backend plugin (comm_plugin.h), loaded with dlopen on first need and
// shared by every model of the process.
#ifndef MODELC_RUNTIME_COMM_HPP
#define MODELC_RUNTIME_COMM_HPP

#include "modelc/comm_plugin.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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
  /// backend failed or a rank did not answer within timeoutSeconds. Runs
  /// after every collective started before it.
  bool allReduce(const float *src, float *dst, int64_t count,
                 double timeoutSeconds, std::string &error);
  /// data of rank `root` on every rank; as allReduce.
  bool broadcast(void *data, int64_t bytes, int root, double timeoutSeconds,
                 std::string &error);
  /// Starts allReduce(src, dst, count) on the process's communication
  /// thread, after every collective started before it, and returns at once
  /// with a ticket for wait() (ABI 15's all_reduce_start: the sum runs
  /// while the entry point goes on). `around`, when set, is called on that
  /// thread right before (false) and after (true) the backend's call: a
  /// traced run times the sum with it.
  uint64_t startAllReduce(const float *src, float *dst, int64_t count,
                          double timeoutSeconds,
                          std::function<void(bool end)> around);
  /// Waits for the collective of `ticket` (once); false with `error` set
  /// when it failed.
  bool wait(uint64_t ticket, std::string &error);
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

  /// The communication thread: every call into the backend after open()
  /// runs on it, one at a time in the order started (MPI_THREAD_SERIALIZED),
  /// so that the ranks meet the collectives in the same order.
  struct Job {
    std::function<bool(std::string &)> work;
    bool done = false, ok = false;
    std::string error;
  };
  uint64_t enqueue(std::function<bool(std::string &)> work);
  void serve();
  std::mutex queueMutex_;
  std::condition_variable queued_, finished_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::map<uint64_t, std::shared_ptr<Job>> jobs_; // started, not waited for
  uint64_t nextTicket_ = 1;
  std::string firstError_; // the backend's first failure
  bool stopping_ = false;
  std::thread worker_;
};

} // namespace modelc::detail

#endif // MODELC_RUNTIME_COMM_HPP
