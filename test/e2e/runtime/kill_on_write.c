/*===- kill_on_write.c - SIGKILL a process in the middle of a checkpoint --===*
 *
 * An LD_PRELOAD shim for the crash test in training.sh. With
 * LMC_TEST_KILL_AT_CHECKPOINT=N, the first write(2) into the N-th checkpoint
 * temp file (`*.safetensors.tmp.*`) the process opens writes half its bytes,
 * then the process sends itself SIGKILL: a torn file, no cleanup, no
 * destructor, exactly what a kill -9 or the OOM killer leaves behind.
 *
 *===----------------------------------------------------------------------===*/
#ifndef _GNU_SOURCE /* RTLD_NEXT; the build may define it already */
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t count) {
  static ssize_t (*realWrite)(int, const void *, size_t);
  static char lastTemp[4096];
  static int tempFiles;
  if (!realWrite)
    realWrite = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  const char *target = getenv("LMC_TEST_KILL_AT_CHECKPOINT");
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t length = target ? readlink(link, path, sizeof path - 1) : -1;
  if (length > 0) {
    path[length] = '\0';
    if (strstr(path, ".safetensors.tmp.") && strcmp(path, lastTemp) != 0) {
      strcpy(lastTemp, path);
      if (++tempFiles == atoi(target)) {
        realWrite(fd, buf, count / 2);
        raise(SIGKILL);
      }
    }
  }
  return realWrite(fd, buf, count);
}
