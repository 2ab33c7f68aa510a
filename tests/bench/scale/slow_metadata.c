/* A parallel file system's metadata latency, emulated (issue #62): LD_PRELOADed, it
 * delays each metadata call (open, openat, stat, their 64-bit names, lstat, mkdir,
 * unlink, rmdir, remove, rename) on a path containing SLOW_METADATA_UNDER (default
 * ".trials/") by SLOW_METADATA_US microseconds (default 1000: a Lustre MDS round trip
 * under load), then makes it. Data reads and writes are not delayed.
 *   LD_PRELOAD=build/tests/bench/libslow_metadata.so SLOW_METADATA_US=1000 slurmtune run ... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void delay_for(const char* path) {
  const char* under = getenv("SLOW_METADATA_UNDER");
  if (!path || !strstr(path, under ? under : ".trials/")) return;
  const char* us = getenv("SLOW_METADATA_US");
  const long micros = us ? atol(us) : 1000;
  struct timespec wait = {micros / 1000000, (micros % 1000000) * 1000};
  while (nanosleep(&wait, &wait) != 0) {
  }
}

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name)                      \
  static __typeof__(&name) real_##name; \
  if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

/* The mode of a call that may create a file: its third argument, when there is one. */
#define CREATION_MODE(flags, last, mode) \
  mode_t mode = 0;                       \
  if ((flags) & (O_CREAT | O_TMPFILE)) { \
    va_list args;                        \
    va_start(args, last);                \
    mode = (mode_t)va_arg(args, int);    \
    va_end(args);                        \
  }

int open(const char* path, int flags, ...) {
  REAL(open);
  CREATION_MODE(flags, flags, mode);
  delay_for(path);
  return real_open(path, flags, mode);
}

int openat(int dir, const char* path, int flags, ...) {
  REAL(openat);
  CREATION_MODE(flags, flags, mode);
  delay_for(path);
  return real_openat(dir, path, flags, mode);
}

/* What programs built with large-file support (Python among them) call. */
int open64(const char* path, int flags, ...) {
  REAL(open64);
  CREATION_MODE(flags, flags, mode);
  delay_for(path);
  return real_open64(path, flags, mode);
}

int openat64(int dir, const char* path, int flags, ...) {
  REAL(openat64);
  CREATION_MODE(flags, flags, mode);
  delay_for(path);
  return real_openat64(dir, path, flags, mode);
}

int stat64(const char* path, struct stat64* out) {
  REAL(stat64);
  delay_for(path);
  return real_stat64(path, out);
}

int stat(const char* path, struct stat* out) {
  REAL(stat);
  delay_for(path);
  return real_stat(path, out);
}

int lstat(const char* path, struct stat* out) {
  REAL(lstat);
  delay_for(path);
  return real_lstat(path, out);
}

int mkdir(const char* path, mode_t mode) {
  REAL(mkdir);
  delay_for(path);
  return real_mkdir(path, mode);
}

int unlink(const char* path) {
  REAL(unlink);
  delay_for(path);
  return real_unlink(path);
}

int rmdir(const char* path) {
  REAL(rmdir);
  delay_for(path);
  return real_rmdir(path);
}

int remove(const char* path) {
  REAL(remove);
  delay_for(path);
  return real_remove(path);
}

int rename(const char* from, const char* to) {
  REAL(rename);
  delay_for(from);
  return real_rename(from, to);
}
