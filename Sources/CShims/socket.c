// SO_PEERCRED and accept4: two of this file's functions need struct ucred and accept4,
// which are only visible with _GNU_SOURCE, and Swift's Glibc module does not define it;
// the third is an ioctl(2), which Swift cannot call (it is variadic).
// (The other files of the C target have reasons of their own; see CShims.h.)
#define _GNU_SOURCE
#include <linux/sockios.h>
#include <stddef.h>
#include <sys/ioctl.h>
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

int chat_unacknowledged_bytes(int fd) {
  int bytes = 0;
  if (ioctl(fd, SIOCOUTQ, &bytes) != 0) return -1;
  return bytes;
}
