// The fault injection chatfuzz --failing-syncs preloads into the broker it
// starts (LD_PRELOAD): it interposes fdatasync(2) and has no interface of
// its own. Its settings come from the environment; see faulty_sync.c.
#ifndef FAULTY_SYNC_H
#define FAULTY_SYNC_H

int fdatasync(int fd);

#endif
