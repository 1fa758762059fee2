#ifndef CSHIMS_H
#define CSHIMS_H
#include <malloc.h>  // malloc_trim, which Glibc's Swift module leaves out
#include <sys/types.h>

/// The uid of the peer of a connected Unix socket, from SO_PEERCRED.
/// Returns 0 on success, -1 with errno set otherwise.
int chat_peer_uid(int fd, uid_t *uid, pid_t *pid);



/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; accept4 also needs
/// _GNU_SOURCE.
int chat_accept_nonblocking(int fd);
/// wcwidth(3): the terminal columns a character takes (-1: unprintable).
int chat_wcwidth(unsigned int character);

#endif
