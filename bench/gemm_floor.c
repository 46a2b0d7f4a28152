/* The time a training step's matrix products take on their own: reads one
 * product per line on stdin, "batch M N K transA transB" (row-major, as
 * lmc's runtime calls BLAS: one sgemm per batch entry), times each distinct
 * shape alone through OpenBLAS and through oneDNN (best of 10 each, warm
 * caches, C overwritten: beta = 0) and prints the sum over the lines of the
 * faster library's time, in milliseconds. No step can run its matmuls
 * faster through these libraries: bench.py reports it as the floor under
 * lmc's step time. With --per-shape it first prints, for each distinct
 * shape, its line, its count and both libraries' times in milliseconds
 * (bench/gemm_libraries.sh). With --parts it instead prints, for each
 * distinct shape, oneDNN's time on the calling thread as one call and cut
 * into 2, 4, 8 and 16 parts of C's larger extent, as lmc's runtime cuts
 * it for its threads (runtime/kernels/matmul_parts.h), the parts one after
 * another (parts under 128 rows or columns are not timed): what a part
 * budget above the thread count costs, each part repacking the other
 * operand (bench/gemm_libraries.sh --parts, lmc --matmul-parts). */
#include <cblas.h>
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxShapes = 256, kReps = 10 };

struct Shape {
  long batch, m, n, k, ta, tb, count;
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *filled(long count, int mod) {
  float *p = malloc(sizeof(float) * (count ? count : 1));
  if (!p) {
    fprintf(stderr, "gemm_floor: out of memory\n");
    exit(1);
  }
  for (long i = 0; i < count; ++i)
    p[i] = (float)(i % mod) * 1e-3f;
  return p;
}

/* Best time of one call sequence for `s`, in seconds, through oneDNN
 * (`dnnl`) or OpenBLAS. */
static double best_seconds(const struct Shape *s, int dnnl) {
  float *a = filled(s->batch * s->m * s->k, 7);
  float *b = filled(s->batch * s->k * s->n, 5);
  float *c = filled(s->batch * s->m * s->n, 3);
  double best = 1e30;
  for (int r = 0; r < kReps; ++r) {
    double t0 = now();
    for (long i = 0; i < s->batch; ++i) {
      const float *ai = a + i * s->m * s->k, *bi = b + i * s->k * s->n;
      float *ci = c + i * s->m * s->n;
      long lda = s->ta ? s->m : s->k, ldb = s->tb ? s->k : s->n;
      if (dnnl)
        dnnl_sgemm(s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', s->m, s->n, s->k, 1,
                   ai, lda, bi, ldb, 0, ci, s->n);
      else
        cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans,
                    s->tb ? CblasTrans : CblasNoTrans, s->m, s->n, s->k, 1,
                    ai, lda, bi, ldb, 0, ci, s->n);
    }
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  free(a);
  free(b);
  free(c);
  return best;
}

/* Seconds of one pass over `parts` parts of C's larger extent, oneDNN. */
static double parts_seconds(const struct Shape *s, const float *a,
                            const float *b, float *c, long parts) {
  long lda = s->ta ? s->m : s->k, ldb = s->tb ? s->k : s->n;
  int by_rows = s->m >= s->n;
  long extent = by_rows ? s->m : s->n;
  char ta = s->ta ? 'T' : 'N', tb = s->tb ? 'T' : 'N';
  double t0 = now();
  for (long p = 0; p < parts; ++p) {
    long lo = extent * p / parts, hi = extent * (p + 1) / parts;
    if (by_rows)
      dnnl_sgemm(ta, tb, hi - lo, s->n, s->k, 1, a + (s->ta ? lo : lo * s->k),
                 lda, b, ldb, 0, c + lo * s->n, s->n);
    else
      dnnl_sgemm(ta, tb, s->m, hi - lo, s->k, 1, a, lda,
                 b + (s->tb ? lo * s->k : lo), ldb, 0, c + lo, s->n);
  }
  return now() - t0;
}

/* The --parts line of one shape (batch entries beyond the first ignored:
 * the runtime cuts each alike). */
static void print_parts(const struct Shape *s) {
  enum { kCounts = 5 };
  static const long kParts[kCounts] = {1, 2, 4, 8, 16};
  float *a = filled(s->m * s->k, 7), *b = filled(s->k * s->n, 5);
  float *c = filled(s->m * s->n, 3);
  long extent = s->m >= s->n ? s->m : s->n;
  double best[kCounts];
  for (int i = 0; i < kCounts; ++i)
    best[i] = 1e30;
  for (int r = 0; r < kReps; ++r)
    for (int i = 0; i < kCounts; ++i)
      if (extent / kParts[i] >= 128) {
        double t = parts_seconds(s, a, b, c, kParts[i]);
        best[i] = t < best[i] ? t : best[i];
      }
  printf("%ld %ld %ld %c%c ms:", s->m, s->n, s->k, s->ta ? 'T' : 'N',
         s->tb ? 'T' : 'N');
  for (int i = 0; i < kCounts; ++i)
    if (best[i] < 1e29)
      printf(" %ld part%s %.2f", kParts[i], kParts[i] > 1 ? "s" : "",
             best[i] * 1e3);
  printf("\n");
  free(a);
  free(b);
  free(c);
}

int main(int argc, char **argv) {
  int per_shape = argc > 1 && strcmp(argv[1], "--per-shape") == 0;
  int parts = argc > 1 && strcmp(argv[1], "--parts") == 0;
  struct Shape shapes[kMaxShapes];
  int count = 0;
  struct Shape s;
  while (scanf("%ld %ld %ld %ld %ld %ld", &s.batch, &s.m, &s.n, &s.k, &s.ta,
               &s.tb) == 6) {
    int i = 0;
    while (i < count &&
           !(shapes[i].batch == s.batch && shapes[i].m == s.m &&
             shapes[i].n == s.n && shapes[i].k == s.k &&
             shapes[i].ta == s.ta && shapes[i].tb == s.tb))
      ++i;
    if (i == count) {
      if (count == kMaxShapes) {
        fprintf(stderr, "gemm_floor: more than %d shapes\n", kMaxShapes);
        return 1;
      }
      s.count = 0;
      shapes[count++] = s;
    }
    ++shapes[i].count;
  }
  if (parts) {
    for (int i = 0; i < count; ++i)
      print_parts(&shapes[i]);
    return 0;
  }
  double total = 0;
  for (int i = 0; i < count; ++i) {
    double openblas = best_seconds(&shapes[i], 0);
    double onednn = best_seconds(&shapes[i], 1);
    if (per_shape)
      printf("%ld %ld %ld %ld %ld %ld x%ld: OpenBLAS %.3f ms, oneDNN %.3f ms\n",
             shapes[i].batch, shapes[i].m, shapes[i].n, shapes[i].k,
             shapes[i].ta, shapes[i].tb, shapes[i].count, openblas * 1e3,
             onednn * 1e3);
    total += shapes[i].count * (onednn < openblas ? onednn : openblas);
  }
  printf("%.3f\n", total * 1e3);
  return 0;
}
