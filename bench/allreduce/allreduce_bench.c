/* allreduce_bench.c - modelc's MPI backend (the plugin the runtime loads,
 * runtime/plugins/mpi) against a raw MPI_Allreduce of the same bytes
 * (issue 25, item 4: at most 1.1x). Run under mpirun:
 *
 *   mpirun -np 2 build/bin/modelc-allreduce-bench [PLUGIN.so]
 *
 * Per size: the median over the repetitions of each, alternating, and
 * their ratio; rank 0 prints a Markdown table. */
#include "modelc/comm_plugin.h"

#include <dlfcn.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *path = argc > 1 ? argv[1] : MODELC_PLUGIN_PATH;
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  modelc_comm_plugin_fn entry =
      library ? (modelc_comm_plugin_fn)dlsym(library, MODELC_COMM_PLUGIN_SYMBOL)
              : NULL;
  if (!entry) {
    fprintf(stderr, "allreduce_bench: cannot load %s: %s\n", path, dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const modelc_comm_plugin *plugin = entry();
  char err[512] = "";
  modelc_comm *comm = plugin->open(err, sizeof err);
  if (!comm) {
    fprintf(stderr, "allreduce_bench: %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const long sizes[] = {4096, 65536, 1 << 20, 25 << 20};
  if (rank == 0)
    printf("| bytes | ranks | MPI_Allreduce us | modelc us | ratio |\n"
           "| --- | --- | --- | --- | --- |\n");
  for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    long count = sizes[s] / 4;
    int reps = sizes[s] >= (1 << 20) ? 30 : 300;
    float *src = malloc((size_t)count * 4), *dst = malloc((size_t)count * 4);
    for (long i = 0; i < count; ++i)
      src[i] = (float)(i % 97) * 0.25f;
    double *raw = malloc((size_t)reps * sizeof(double));
    double *ours = malloc((size_t)reps * sizeof(double));
    for (int r = -3; r < reps; ++r) { /* 3 warm-up rounds */
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Allreduce(src, dst, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t1 = MPI_Wtime();
      MPI_Barrier(MPI_COMM_WORLD);
      double t2 = MPI_Wtime();
      if (plugin->all_reduce_f32(comm, src, dst, count, 60.0, err,
                                 sizeof err)) {
        fprintf(stderr, "allreduce_bench: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      double t3 = MPI_Wtime();
      if (r >= 0) {
        raw[r] = (t1 - t0) * 1e6;
        ours[r] = (t3 - t2) * 1e6;
      }
    }
    double a = median(raw, reps), b = median(ours, reps);
    if (rank == 0)
      printf("| %ld | %d | %.1f | %.1f | %.2f |\n", sizes[s], size, a, b,
             b / a);
    free(src);
    free(dst);
    free(raw);
    free(ours);
  }
  plugin->close(comm);
  MPI_Finalize();
  return 0;
}
