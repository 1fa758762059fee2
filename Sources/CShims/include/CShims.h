#ifndef CSHIMS_H
#define CSHIMS_H
// The C that Swift cannot reach or should not write: functions that Swift's
// Glibc module hides behind feature macros (accept4 and struct ucred need
// _GNU_SOURCE, wcwidth needs _XOPEN_SOURCE, malloc_trim, epoll and eventfd are
// left out), and code that must run between fork and exec or after fork in a
// child, where Swift's runtime may not (spawning, connecting as another user).
#include <malloc.h>       // malloc_trim, which Glibc's Swift module leaves out
#include <sys/epoll.h>    // epoll(7), which Glibc's Swift module leaves out
#include <sys/eventfd.h>  // eventfd(2), likewise
#include <sys/types.h>

/// The uid of the peer of a connected Unix socket, from SO_PEERCRED.
/// Returns 0 on success, -1 with errno set otherwise.
int chat_peer_uid(int fd, uid_t *uid, pid_t *pid);



/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; accept4 also needs
/// _GNU_SOURCE.
int chat_accept_nonblocking(int fd);
/// posix_spawn(3) of `path` for tests and tools that run other programs:
/// `input`, `output` and `error` (each -1 to inherit) become descriptors 0, 1
/// and 2, every other descriptor is closed in the child (so no pipe end or
/// socket leaks into a daemon the child leaves behind), the child starts with
/// no signal blocked and default dispositions (test threads block signals),
/// in a process group of its own, in `directory` unless it is NULL.
/// Returns 0, or the error number.
int chat_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
               const char *directory, int input, int output, int error);
/// A connection to the Unix stream socket at `path` made as the user `uid`
/// and group `gid` (the caller must be root), so that the server's
/// SO_PEERCRED names that user; see connect_as.c. Returns the descriptor
/// (close-on-exec), or -1 with errno set.
int chat_connect_as(const char *path, uid_t uid, gid_t gid);
/// wcwidth(3): the terminal columns a character takes (-1: unprintable).
int chat_wcwidth(unsigned int character);

#endif
