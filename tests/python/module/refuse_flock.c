/* LD_PRELOADed by check_file_lock.sh: flock() refused as a file system without it
 * refuses it (some Lustre, GPFS and DVS mounts), with errno REFUSE_FLOCK_ERRNO (default
 * 524, ENOTSUPP, which HDF5's best-effort locking does not ignore). */
#include <errno.h>
#include <stdlib.h>
#include <sys/file.h>

int flock(int fd, int operation) {
  (void)fd;
  (void)operation;
  const char* code = getenv("REFUSE_FLOCK_ERRNO");
  errno = code ? atoi(code) : 524;
  return -1;
}
