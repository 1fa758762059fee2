// struct ucred and accept4 are only visible with _GNU_SOURCE, which Swift's Glibc module
// does not define.
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include "CShims.h"

int chat_peer_uid(int fd, uid_t *uid, pid_t *pid) {
  struct ucred credentials;
  socklen_t length = sizeof credentials;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
  *uid = credentials.uid;
  *pid = credentials.pid;
  return 0;
}

int chat_accept_nonblocking(int fd) {
  return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
