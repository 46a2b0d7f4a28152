/* What cutting a product into parts costs: reads products on stdin as
 * "batch M N K transA transB" (row-major; bench/bench.py's gemm_shapes()
 * lines), and for each distinct shape times it through oneDNN on the
 * calling thread as one call and cut into 2, 4, 8 and 16 parts of C's
 * larger extent, as lmc's runtime cuts it for its threads
 * (runtime/kernels/matmul_parts.h), the parts one after another (best of
 * 12, C overwritten; parts under 128 rows or columns are not timed).
 * Each part repacks the other operand: this is what a part budget above
 * the thread count costs (lmc --matmul-parts). bench/gemm_parts.sh. */
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kReps = 12, kCounts = 5 };
static const long kParts[kCounts] = {1, 2, 4, 8, 16};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *filled(long count, int mod) {
  float *p = malloc(sizeof(float) * (count ? count : 1));
  if (!p) {
    fprintf(stderr, "gemm_parts: out of memory\n");
    exit(1);
  }
  for (long i = 0; i < count; ++i)
    p[i] = (float)(i % mod) * 1e-3f;
  return p;
}

/* Seconds of one pass over the parts of C's larger extent. */
static double time_parts(long m, long n, long k, int ta, int tb,
                         const float *a, const float *b, float *c,
                         long parts) {
  long lda = ta ? m : k, ldb = tb ? k : n;
  int by_rows = m >= n;
  long extent = by_rows ? m : n;
  double start = now();
  for (long p = 0; p < parts; ++p) {
    long lo = extent * p / parts, hi = extent * (p + 1) / parts;
    if (by_rows)
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', hi - lo, n, k, 1,
                 a + (ta ? lo : lo * k), lda, b, ldb, 0, c + lo * n, n);
    else
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, hi - lo, k, 1, a, lda,
                 b + (tb ? lo * k : lo), ldb, 0, c + lo, n);
  }
  return now() - start;
}

int main(void) {
  long seen[256][5], count = 0, batch, m, n, k, ta, tb;
  while (scanf("%ld %ld %ld %ld %ld %ld", &batch, &m, &n, &k, &ta, &tb) ==
         6) {
    int repeated = 0;
    for (long i = 0; i < count; ++i)
      repeated |= seen[i][0] == m && seen[i][1] == n && seen[i][2] == k &&
                  seen[i][3] == ta && seen[i][4] == tb;
    if (repeated || count == 256)
      continue;
    long shape[5] = {m, n, k, ta, tb};
    for (int i = 0; i < 5; ++i)
      seen[count][i] = shape[i];
    ++count;
    float *a = filled(m * k, 7), *b = filled(k * n, 5), *c = filled(m * n, 3);
    long extent = m >= n ? m : n;
    double best[kCounts];
    for (int i = 0; i < kCounts; ++i)
      best[i] = 1e30;
    for (int r = 0; r < kReps; ++r)
      for (int i = 0; i < kCounts; ++i)
        if (extent / kParts[i] >= 128) {
          double t = time_parts(m, n, k, ta, tb, a, b, c, kParts[i]);
          best[i] = t < best[i] ? t : best[i];
        }
    printf("%ld %ld %ld %c%c ms:", m, n, k, ta ? 'T' : 'N', tb ? 'T' : 'N');
    for (int i = 0; i < kCounts; ++i)
      if (best[i] < 1e29)
        printf(" %ld part%s %.2f", kParts[i], kParts[i] > 1 ? "s" : "",
               best[i] * 1e3);
    printf("\n");
    free(a);
    free(b);
    free(c);
  }
  return 0;
}
