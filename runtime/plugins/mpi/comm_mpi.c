/* comm_mpi.c - modelc's communication backend on MPI (Debian's Open MPI):
 * libmodelc_comm_mpi.so, loaded by the runtime when a distributed run is
 * asked for (comm_plugin.h). Collectives are nonblocking MPI calls polled
 * against a deadline, so that a rank that stops answering is an error
 * after the timeout instead of a hang. */
#include "modelc/comm_plugin.h"

#include <mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct modelc_comm {
  MPI_Comm world;
  int rank, size;
  int initialized_here; /* this plugin called MPI_Init (and so finalizes) */
};

static void say(char *err, size_t err_size, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(err, err_size, format, args);
  va_end(args);
}

static void mpiMessage(int code, char *text) {
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    snprintf(text, MPI_MAX_ERROR_STRING, "MPI error %d", code);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for `request` until timeout_s have passed. */
static int finish(modelc_comm *comm, MPI_Request *request, const char *what,
                  double timeout_s, char *err, size_t err_size) {
  double deadline = now() + timeout_s;
  for (unsigned spins = 0;; ++spins) {
    int done = 0;
    int code = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      mpiMessage(code, text);
      say(err, err_size, "%s on rank %d of %d failed: %s", what, comm->rank,
          comm->size, text);
      return 1;
    }
    if (done)
      return 0;
    if (now() > deadline) {
      say(err, err_size,
          "%s on rank %d of %d: no answer from the other ranks within %g s "
          "(--collective-timeout); a rank died, stopped, or runs another "
          "number of steps",
          what, comm->rank, comm->size, timeout_s);
      return 1;
    }
    if (spins > 1000) {
      struct timespec pause = {0, 50000}; /* 50 us: leave the core */
      nanosleep(&pause, NULL);
    }
  }
}

static modelc_comm *commOpen(char *err, size_t err_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int here = 0;
  if (!initialized) {
    int provided = 0;
    int code = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      mpiMessage(code, text);
      say(err, err_size, "MPI_Init failed: %s", text);
      return NULL;
    }
    here = 1;
  }
  modelc_comm *comm = calloc(1, sizeof *comm);
  if (!comm) {
    say(err, err_size, "out of memory");
    return NULL;
  }
  comm->initialized_here = here;
  /* Errors come back as codes, not as the default abort. */
  MPI_Comm_dup(MPI_COMM_WORLD, &comm->world);
  MPI_Comm_set_errhandler(comm->world, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm->world, &comm->rank);
  MPI_Comm_size(comm->world, &comm->size);
  return comm;
}

static int commRank(const modelc_comm *comm) { return comm->rank; }
static int commSize(const modelc_comm *comm) { return comm->size; }

static int allReduce(modelc_comm *comm, const float *src, float *dst,
                     int64_t count, double timeout_s, char *err,
                     size_t err_size) {
  /* MPI counts are ints: large buffers go in pieces. */
  const int64_t piece = (int64_t)1 << 30;
  for (int64_t at = 0; at < count; at += piece) {
    int n = (int)(count - at < piece ? count - at : piece);
    MPI_Request request;
    const void *from = src == dst ? MPI_IN_PLACE : (const void *)(src + at);
    int code = MPI_Iallreduce(from, dst + at, n, MPI_FLOAT, MPI_SUM,
                              comm->world, &request);
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      mpiMessage(code, text);
      say(err, err_size, "all-reduce on rank %d of %d failed: %s", comm->rank,
          comm->size, text);
      return 1;
    }
    if (finish(comm, &request, "all-reduce", timeout_s, err, err_size))
      return 1;
  }
  return 0;
}

static int broadcast(modelc_comm *comm, void *data, int64_t bytes,
                     double timeout_s, char *err, size_t err_size) {
  if (bytes > 0x7fffffff) {
    say(err, err_size, "broadcast of %lld bytes: at most 2 GiB",
        (long long)bytes);
    return 1;
  }
  MPI_Request request;
  int code =
      MPI_Ibcast(data, (int)bytes, MPI_BYTE, 0, comm->world, &request);
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    mpiMessage(code, text);
    say(err, err_size, "broadcast on rank %d of %d failed: %s", comm->rank,
        comm->size, text);
    return 1;
  }
  return finish(comm, &request, "broadcast", timeout_s, err, err_size);
}

static void commAbort(modelc_comm *comm, int code) {
  MPI_Abort(comm ? comm->world : MPI_COMM_WORLD, code);
}

static void commClose(modelc_comm *comm) {
  if (!comm)
    return;
  MPI_Comm_free(&comm->world);
  if (comm->initialized_here) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }
  free(comm);
}

static const modelc_comm_plugin plugin = {
    MODELC_COMM_PLUGIN_VERSION, "mpi", commOpen,  commRank, commSize,
    allReduce,                  broadcast, commAbort, commClose,
};

__attribute__((visibility("default"))) const modelc_comm_plugin *
modelc_comm_plugin_v1(void) {
  return &plugin;
}
