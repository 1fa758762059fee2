// A disk whose syncs fail now and then, from outside the broker: chatfuzz
// --failing-syncs starts chatbroker with this library in LD_PRELOAD, and
// every fdatasync(2) the broker makes (the journal's group commit, its last
// sync at shutdown, the zero fill ahead of the journal's end) goes through
// here. Each one syncs for real, so it takes a real disk's time, and then,
// while the switch file exists, fails with EIO at the given rate, as a
// disk that lost the write would. The broker has no hook for this: it sees
// what it would see on a failing disk (chatbroker(8), "JOURNAL").
//
// fsync(2) is left alone on purpose: the broker calls it only for files it
// replaces whole (compaction's copy, its directory, a repaired journal),
// whose failure cuts nothing back and shows nothing, so it is no part of a
// dirty read; and a failed fsync at start-up would stop the broker rather
// than test it.
//
//   CHATFUZZ_FAILING_SYNCS_PERCENT  how many syncs in a hundred fail (0-100,
//                                   fractions allowed)
//   CHATFUZZ_FAILING_SYNCS_SEED     the seed of the draws (a whole number)
//   CHATFUZZ_FAILING_SYNCS_SWITCH   a path: syncs fail only while it exists,
//                                   so that start-up and the final shutdown
//                                   sync succeed (chatfuzz removes it before
//                                   it stops the broker)
//   CHATFUZZ_FAILING_SYNCS_DELAY_MS a failing sync first hangs this long, as
//                                   a dying disk's does, so that a test can
//                                   act while it hangs (default 0)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "faulty_sync.h"

static int (*real_fdatasync)(int);
static uint64_t threshold;  // a draw below it fails; 2^64 * percent / 100
static uint64_t state;
static const char *switch_path;
static useconds_t delay;  // microseconds a failing sync hangs first
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void set_up(void) {
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  const char *percent = getenv("CHATFUZZ_FAILING_SYNCS_PERCENT");
  const char *seed = getenv("CHATFUZZ_FAILING_SYNCS_SEED");
  switch_path = getenv("CHATFUZZ_FAILING_SYNCS_SWITCH");
  double rate = percent ? strtod(percent, NULL) / 100 : 0;
  if (rate <= 0) {
    threshold = 0;
  } else if (rate >= 1) {
    threshold = UINT64_MAX;
  } else {
    threshold = (uint64_t)(rate * 18446744073709551616.0);
  }
  state = seed ? strtoull(seed, NULL, 10) : 0;
  const char *delay_ms = getenv("CHATFUZZ_FAILING_SYNCS_DELAY_MS");
  delay = delay_ms ? (useconds_t)(strtoul(delay_ms, NULL, 10) * 1000) : 0;
}

// SplitMix64, as the fuzzer's own generator: one step per sync, from any
// thread (the group commit thread and the zero fill's queue both sync).
static uint64_t draw(void) {
  uint64_t z = __atomic_add_fetch(&state, 0x9E3779B97F4A7C15ULL, __ATOMIC_RELAXED);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int fdatasync(int fd) {
  pthread_once(&once, set_up);
  if (!real_fdatasync) {
    errno = ENOSYS;
    return -1;
  }
  int result = real_fdatasync(fd);
  if (result != 0 || threshold == 0) return result;
  int saved = errno;
  if (switch_path && access(switch_path, F_OK) != 0) {
    errno = saved;
    return result;
  }
  if (draw() < threshold) {
    if (delay) usleep(delay);
    errno = EIO;
    return -1;
  }
  errno = saved;
  return result;
}
