// comm.cpp - loading the communication backend plugin and calling it.
#include "comm.hpp"

#include "modelc/runtime.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace modelc::detail {

namespace {

std::vector<std::string> pluginCandidates(const std::string &backend) {
  std::string file = "libmodelc_comm_" + backend + ".so";
  std::vector<std::string> paths;
  if (const char *path = std::getenv("MODELC_COMM_PLUGIN"); path && *path)
    paths.push_back(path);
#ifdef MODELC_PLUGIN_BUILD_DIR
  paths.push_back(std::string(MODELC_PLUGIN_BUILD_DIR) + "/" + file);
#endif
#ifdef MODELC_PLUGIN_INSTALL_DIR
  paths.push_back(std::string(MODELC_PLUGIN_INSTALL_DIR) + "/" + file);
#endif
  paths.push_back(file);
  return paths;
}

std::mutex joinMutex;
// The process's communicator: kept from the first join to exit, when it is
// closed (MPI_Finalize) unless a collective failed.
std::shared_ptr<Communicator> joined;

} // namespace

std::shared_ptr<Communicator> Communicator::join(const std::string &backend) {
  std::lock_guard<std::mutex> lock(joinMutex);
  if (std::shared_ptr<Communicator> existing = joined) {
    if (existing->backend_ != backend)
      throw Error("distributed run: this process already joined one through '" +
                  existing->backend_ + "', not '" + backend + "'");
    return existing;
  }
  if (backend != "mpi")
    throw Error("distributed run: unknown backend '" + backend +
                "' (expected mpi)");
  std::shared_ptr<Communicator> comm(new Communicator());
  comm->backend_ = backend;
  std::string tried;
  for (const std::string &path : pluginCandidates(backend)) {
    comm->library_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (comm->library_)
      break;
    const char *why = ::dlerror();
    tried += "\n  " + path + ": " + (why ? why : "not found");
  }
  if (!comm->library_)
    throw Error("distributed run: cannot load the '" + backend +
                "' backend plugin (libmodelc_comm_" + backend +
                ".so; built when CMake finds MPI: apt install "
                "libopenmpi-dev openmpi-bin, or set MODELC_COMM_PLUGIN):" +
                tried);
  auto entry = reinterpret_cast<modelc_comm_plugin_fn>(
      ::dlsym(comm->library_, MODELC_COMM_PLUGIN_SYMBOL));
  comm->plugin_ = entry ? entry() : nullptr;
  if (!comm->plugin_ || comm->plugin_->version != MODELC_COMM_PLUGIN_VERSION)
    throw Error("distributed run: the '" + backend +
                "' plugin is not a modelc communication plugin of version " +
                std::to_string(MODELC_COMM_PLUGIN_VERSION));
  char error[512] = "";
  comm->comm_ = comm->plugin_->open(error, sizeof error);
  if (!comm->comm_)
    throw Error(std::string("distributed run: cannot join through '") +
                backend + "': " + error);
  comm->rank_ = comm->plugin_->rank(comm->comm_);
  comm->size_ = comm->plugin_->size(comm->comm_);
  joined = comm;
  std::atexit([] {
    std::lock_guard<std::mutex> lock(joinMutex);
    joined.reset();
  });
  return comm;
}

Communicator::~Communicator() {
  {
    std::lock_guard<std::mutex> lock(queueMutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  if (worker_.joinable())
    worker_.join();
  if (plugin_ && comm_ && !failed_)
    plugin_->close(comm_);
  // The library stays loaded: MPI does not support being unloaded.
}

uint64_t Communicator::enqueue(std::function<bool(std::string &)> work) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  std::lock_guard<std::mutex> lock(queueMutex_);
  if (!worker_.joinable())
    worker_ = std::thread([this] { serve(); });
  uint64_t ticket = nextTicket_++;
  jobs_[ticket] = job;
  queue_.push_back(std::move(job));
  queued_.notify_one();
  return ticket;
}

void Communicator::serve() {
  std::unique_lock<std::mutex> lock(queueMutex_);
  for (;;) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping, nothing left
    std::shared_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    // After a failed collective the other ranks may be gone or stuck: the
    // ones queued behind it fail without calling the backend (which could
    // wait for them until the timeout ends the process, hiding the error).
    if (failed_) {
      job->ok = false;
      job->error =
          "not run after an earlier collective failed (" + firstError_ + ")";
      job->done = true;
      finished_.notify_all();
      continue;
    }
    lock.unlock();
    std::string error;
    bool ok = job->work(error);
    lock.lock();
    if (!ok && !failed_) {
      failed_ = true;
      firstError_ = error;
    }
    job->ok = ok;
    job->error = std::move(error);
    job->done = true;
    finished_.notify_all();
  }
}

bool Communicator::wait(uint64_t ticket, std::string &error) {
  std::unique_lock<std::mutex> lock(queueMutex_);
  auto it = jobs_.find(ticket);
  if (it == jobs_.end()) {
    error = "no collective started as #" + std::to_string(ticket);
    return false;
  }
  std::shared_ptr<Job> job = it->second;
  finished_.wait(lock, [&] { return job->done; });
  jobs_.erase(ticket);
  if (!job->ok)
    error = job->error;
  return job->ok;
}

uint64_t Communicator::startAllReduce(const float *src, float *dst,
                                      int64_t count, double timeoutSeconds,
                                      std::function<void(bool end)> around) {
  return enqueue([=, this, around = std::move(around)](std::string &error) {
    if (around)
      around(false);
    char text[512] = "";
    bool ok = plugin_->all_reduce_f32(comm_, src, dst, count, timeoutSeconds,
                                      text, sizeof text) == 0;
    if (around)
      around(true);
    if (!ok)
      error = text;
    return ok;
  });
}

bool Communicator::allReduce(const float *src, float *dst, int64_t count,
                             double timeoutSeconds, std::string &error) {
  return wait(startAllReduce(src, dst, count, timeoutSeconds, nullptr), error);
}

bool Communicator::broadcast(void *data, int64_t bytes, int root,
                             double timeoutSeconds, std::string &error) {
  return wait(enqueue([=, this](std::string &why) {
                char text[512] = "";
                if (plugin_->broadcast(comm_, data, bytes, root, timeoutSeconds,
                                       text, sizeof text) == 0)
                  return true;
                why = text;
                return false;
              }),
              error);
}

std::shared_ptr<Communicator> Communicator::current() {
  std::lock_guard<std::mutex> lock(joinMutex);
  return joined;
}

void Communicator::abort(int code) {
  plugin_->abort(comm_, code);
  std::_Exit(code);
}

} // namespace modelc::detail

void modelc::abort_distributed_run(int exit_code) {
  if (std::shared_ptr<detail::Communicator> comm =
          detail::Communicator::current();
      comm && comm->size() > 1)
    comm->abort(exit_code);
}
