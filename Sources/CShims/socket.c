// SO_PEERCRED and accept4: two of this file's functions need struct ucred and accept4,
// which are only visible with _GNU_SOURCE, and Swift's Glibc module does not define it;
// one is an ioctl(2) and one a raw syscall(2), which Swift cannot call (they are
// variadic); TCP_NODELAY is in <netinet/tcp.h>, which the Glibc module leaves out.
// (The other files of the C target have reasons of their own; see CShims.h.)
#define _GNU_SOURCE
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
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

int chat_send_without_delay(int fd) {
  int on = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

int chat_sends_without_delay(int fd) {
  int on = 0;
  socklen_t length = sizeof on;
  if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &length) != 0) return -1;
  return on != 0;
}

int chat_descriptor_of(pid_t pid, int fd) {
  int process = (int)syscall(SYS_pidfd_open, pid, 0);
  if (process < 0) return -1;
  int copy = (int)syscall(SYS_pidfd_getfd, process, fd, 0);
  close(process);
  return copy;
}
