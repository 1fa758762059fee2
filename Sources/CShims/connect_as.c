// Connecting to a Unix socket as another user without a relay program: a
// forked child takes that user's ids and connects, and hands the connected
// descriptor back over SCM_RIGHTS. The kernel records the peer's credentials
// at connect(2), so the server sees that user for the life of the
// connection, while the caller reads and writes the socket directly. The
// same for loopback TCP: a socket's owner, as sock_diag reports it, is
// whoever created it, so the child creates it.
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>
#include "CShims.h"

/// In the child: only async-signal-safe calls, and raw set*id system calls,
/// which change this one thread's ids (glibc's wrappers would signal the
/// threads of the parent it no longer has).
static void connect_in_child(int reply, const struct sockaddr *address, socklen_t length,
                             uid_t uid, gid_t gid) {
  int error = 0;
  int fd = -1;
  if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setgid, gid) != 0 ||
      syscall(SYS_setuid, uid) != 0) {
    error = errno;
  } else {
    fd = socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, address, length) != 0) error = errno;
  }
  char control[CMSG_SPACE(sizeof(int))];
  memset(control, 0, sizeof control);
  struct iovec data = {.iov_base = &error, .iov_len = sizeof error};
  struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1};
  if (error == 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof fd);
  }
  _exit(sendmsg(reply, &message, MSG_NOSIGNAL) == (ssize_t)sizeof error ? 0 : 1);
}

static int connect_as(const struct sockaddr *address, socklen_t length, uid_t uid, gid_t gid);

int chat_connect_as(const char *path, uid_t uid, gid_t gid) {
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(address.sun_path, path);
  return connect_as((const struct sockaddr *)&address, sizeof address, uid, gid);
}

int chat_connect_loopback_as(int family, unsigned short port, uid_t uid, gid_t gid) {
  if (family == AF_INET6) {
    struct sockaddr_in6 address;
    memset(&address, 0, sizeof address);
    address.sin6_family = AF_INET6;
    address.sin6_port = htons(port);
    address.sin6_addr = in6addr_loopback;
    return connect_as((const struct sockaddr *)&address, sizeof address, uid, gid);
  }
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect_as((const struct sockaddr *)&address, sizeof address, uid, gid);
}

static int connect_as(const struct sockaddr *address, socklen_t length, uid_t uid, gid_t gid) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
  pid_t child = fork();
  if (child < 0) {
    int error = errno;
    close(pair[0]);
    close(pair[1]);
    errno = error;
    return -1;
  }
  if (child == 0) connect_in_child(pair[1], address, length, uid, gid);
  close(pair[1]);

  int error = EPROTO;
  int fd = -1;
  char control[CMSG_SPACE(sizeof(int))];
  struct iovec data = {.iov_base = &error, .iov_len = sizeof error};
  struct msghdr message = {
      .msg_iov = &data, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  ssize_t received;
  do received = recvmsg(pair[0], &message, MSG_CMSG_CLOEXEC);
  while (received < 0 && errno == EINTR);
  if (received == (ssize_t)sizeof error && error == 0) {
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    if (header != NULL && header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS)
      memcpy(&fd, CMSG_DATA(header), sizeof fd);
    else
      error = EPROTO;
  } else if (received != (ssize_t)sizeof error) {
    error = EPROTO;
  }
  close(pair[0]);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (fd < 0) {
    errno = error;
    return -1;
  }
  return fd;
}
