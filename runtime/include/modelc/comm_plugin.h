/* comm_plugin.h - the C interface of a communication backend plugin: the
 * shared library the runtime loads (dlopen) when a distributed run is asked
 * for (LoadOptions::distributed, modelc-run --distributed), so that neither
 * the runtime nor model.so links MPI. runtime/plugins/mpi is the Open MPI
 * backend (libmodelc_comm_mpi.so). docs/training.md, "Data parallel". */
#ifndef MODELC_COMM_PLUGIN_H
#define MODELC_COMM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MODELC_COMM_PLUGIN_VERSION 2u

typedef struct modelc_comm modelc_comm; /* one process's place in a run */

/* Every call that can fail returns 0, or nonzero with a message (one line,
 * NUL-terminated) in err[0..err_size). A collective that waits more than
 * timeout_s seconds (a rank died or stopped answering) never hangs: the
 * plugin reports it, as an error or by ending the process with the message
 * on stderr and status 1 (the MPI plugin: its collectives are MPI's
 * blocking ones, which cannot be given up), after which mpirun ends the
 * job. After open(), the runtime makes every call but abort() from its
 * communication thread, one at a time (MPI_THREAD_SERIALIZED), in the
 * order its runs issue them. */
typedef struct modelc_comm_plugin {
  uint32_t version; /* MODELC_COMM_PLUGIN_VERSION */
  const char *name; /* "mpi" */
  /* Joins the run this process was started in (mpirun). */
  modelc_comm *(*open)(char *err, size_t err_size);
  int (*rank)(const modelc_comm *comm);
  int (*size)(const modelc_comm *comm);
  /* dst[i] = the sum of src[i] over the ranks, the same bits on every rank
   * (src == dst is allowed). */
  int (*all_reduce_f32)(modelc_comm *comm, const float *src, float *dst,
                        int64_t count, double timeout_s, char *err,
                        size_t err_size);
  /* data[0..bytes) of rank `root` on every rank (version 2: the root). */
  int (*broadcast)(modelc_comm *comm, void *data, int64_t bytes, int root,
                   double timeout_s, char *err, size_t err_size);
  /* Ends every rank of the run now (after an error that leaves the others
   * waiting), with `code` as the exit status. */
  void (*abort)(modelc_comm *comm, int code);
  /* Leaves the run (MPI_Finalize). */
  void (*close)(modelc_comm *comm);
} modelc_comm_plugin;

/* The one symbol a plugin exports. */
typedef const modelc_comm_plugin *(*modelc_comm_plugin_fn)(void);
#define MODELC_COMM_PLUGIN_SYMBOL "modelc_comm_plugin_v1"

#ifdef __cplusplus
}
#endif

#endif /* MODELC_COMM_PLUGIN_H */
