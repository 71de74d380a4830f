/* comm_mpi.c - modelc's communication backend on MPI (Debian's Open MPI):
 * libmodelc_comm_mpi.so, loaded by the runtime when a distributed run is
 * asked for (comm_plugin.h). Collectives are MPI's blocking ones (as fast
 * as a raw MPI_Allreduce: bench/allreduce); a watchdog thread ends the
 * process with a clear message when one has waited past its deadline for a
 * rank that died or stopped answering, and mpirun then ends the job. (The
 * nonblocking collectives, polled, cost up to 2x on 2 ranks: their
 * algorithms are not the tuned blocking ones.) */
#include "modelc/comm_plugin.h"

#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct modelc_comm {
  MPI_Comm world;
  int rank, size;
  int initialized_here; /* this plugin called MPI_Init (and so finalizes) */
  /* The watchdog: while a collective runs, its deadline (monotonic
   * seconds; 0: none), what it is and its timeout. Plain atomic stores on
   * the collective's path: the watchdog looks every 50 ms. */
  pthread_t watchdog;
  _Atomic double deadline;
  _Atomic(const char *) what;
  _Atomic double timeout;
  _Atomic int stopping;
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

static void *watch(void *arg) {
  modelc_comm *comm = arg;
  while (!atomic_load(&comm->stopping)) {
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double deadline = atomic_load(&comm->deadline);
    if (deadline > 0 && now() > deadline) {
      /* The collective still waits: the others will not come. Leave now
       * (without MPI: this thread may not call it); mpirun sees a rank
       * exit with status 1 and ends the job. */
      fprintf(stderr,
              "modelc: error: %s on rank %d of %d: no answer from the other "
              "ranks within %g s (--collective-timeout); a rank died, "
              "stopped, or runs another number of steps\n",
              atomic_load(&comm->what), comm->rank, comm->size,
              atomic_load(&comm->timeout));
      fflush(stderr);
      _exit(1);
    }
  }
  return NULL;
}

/* Arms the watchdog for `what` (a string literal), to fire after
 * timeout_s. */
static void arm(modelc_comm *comm, const char *what, double timeout_s) {
  atomic_store(&comm->what, what);
  atomic_store(&comm->timeout, timeout_s);
  atomic_store(&comm->deadline, now() + timeout_s);
}

static void disarm(modelc_comm *comm) { atomic_store(&comm->deadline, 0.0); }

static int failed(modelc_comm *comm, int code, const char *what, char *err,
                  size_t err_size) {
  char text[MPI_MAX_ERROR_STRING];
  mpiMessage(code, text);
  say(err, err_size, "%s on rank %d of %d failed: %s", what, comm->rank,
      comm->size, text);
  return 1;
}

static modelc_comm *commOpen(char *err, size_t err_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int here = 0, provided = 0;
  if (!initialized) {
    int code = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      mpiMessage(code, text);
      say(err, err_size, "MPI_Init failed: %s", text);
      return NULL;
    }
    here = 1;
  } else {
    MPI_Query_thread(&provided);
  }
  /* The runtime calls MPI from its communication thread, one call at a
   * time: MPI_THREAD_SERIALIZED at least. */
  if (provided < MPI_THREAD_SERIALIZED) {
    say(err, err_size,
        "MPI gives thread level %d, below MPI_THREAD_SERIALIZED (%d): the "
        "runtime calls MPI from its communication thread (a program that "
        "initialises MPI itself must ask for MPI_THREAD_SERIALIZED or "
        "MPI_THREAD_MULTIPLE with MPI_Init_thread)",
        provided, MPI_THREAD_SERIALIZED);
    return NULL;
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
  if (pthread_create(&comm->watchdog, NULL, watch, comm) != 0) {
    say(err, err_size, "cannot start the collective watchdog thread");
    return NULL;
  }
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
    const void *from = src == dst ? MPI_IN_PLACE : (const void *)(src + at);
    arm(comm, "all-reduce", timeout_s);
    int code =
        MPI_Allreduce(from, dst + at, n, MPI_FLOAT, MPI_SUM, comm->world);
    disarm(comm);
    if (code != MPI_SUCCESS)
      return failed(comm, code, "all-reduce", err, err_size);
  }
  return 0;
}

static int broadcast(modelc_comm *comm, void *data, int64_t bytes, int root,
                     double timeout_s, char *err, size_t err_size) {
  if (bytes > 0x7fffffff) {
    say(err, err_size, "broadcast of %lld bytes: at most 2 GiB",
        (long long)bytes);
    return 1;
  }
  arm(comm, "broadcast", timeout_s);
  int code = MPI_Bcast(data, (int)bytes, MPI_BYTE, root, comm->world);
  disarm(comm);
  if (code != MPI_SUCCESS)
    return failed(comm, code, "broadcast", err, err_size);
  return 0;
}

static void commAbort(modelc_comm *comm, int code) {
  MPI_Abort(comm ? comm->world : MPI_COMM_WORLD, code);
}

static void commClose(modelc_comm *comm) {
  if (!comm)
    return;
  atomic_store(&comm->stopping, 1);
  pthread_join(comm->watchdog, NULL);
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
    MODELC_COMM_PLUGIN_VERSION,
    "mpi",
    commOpen,
    commRank,
    commSize,
    allReduce,
    broadcast,
    commAbort,
    commClose,
};

__attribute__((visibility("default"))) const modelc_comm_plugin *
modelc_comm_plugin_v1(void) {
  return &plugin;
}
