/* Measures OpenBLAS sgemm GFLOP/s on square matrices: the machine's
 * practical matmul peak that bench.py compares against. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n),
        *c = malloc(sizeof(float) * n * n);
  if (!a || !b || !c)
    return 1;
  for (long i = 0; i < (long)n * n; ++i) {
    a[i] = (float)(i % 7) * 0.1f;
    b[i] = (float)(i % 5) * 0.1f;
    c[i] = 0;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n,
              0, c, n);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b,
                n, 0, c, n);
    double dt = now() - t0;
    if (dt < best)
      best = dt;
  }
  printf("%.1f\n", 2.0 * n * n * n / best / 1e9);
  return 0;
}
