#ifndef CSHIMS_H
#define CSHIMS_H
// The C that Swift cannot reach or should not write: functions that Swift's
// Glibc module hides behind feature macros (accept4 and struct ucred need
// _GNU_SOURCE, wcwidth needs _XOPEN_SOURCE, malloc_trim, epoll, eventfd and
// timerfd are left out), and code that must run between fork and exec or after fork in a
// child, where Swift's runtime may not (spawning, connecting as another user),
// and the netlink structs of sock_diag(7).
#include <malloc.h>       // malloc_trim, which Glibc's Swift module leaves out
#include <sys/epoll.h>    // epoll(7), which Glibc's Swift module leaves out
#include <sys/eventfd.h>  // eventfd(2), likewise
#include <sys/timerfd.h>  // timerfd_create(2), likewise
#include <sys/types.h>

/// The uid of the peer of a connected Unix socket, from SO_PEERCRED.
/// Returns 0 on success, -1 with errno set otherwise.
int chat_peer_uid(int fd, uid_t *uid, pid_t *pid);



/// What the kernel lists for one TCP socket (sock_diag(7), struct inet_diag_msg).
struct chat_tcp_socket {
  /// The socket's owner: the uid that created it (0 for a timewait entry).
  uid_t uid;
  /// Its inode: 0 once no process holds it (orphaned, or a timewait entry).
  unsigned int inode;
  /// Its TCP state, as the kernel numbers them: 1 ESTABLISHED, 4 FIN_WAIT1,
  /// 5 FIN_WAIT2, 6 TIME_WAIT, 8 CLOSE_WAIT, 10 LISTEN, ... (a timewait
  /// entry says the state it was closed in, FIN_WAIT2 or TIME_WAIT).
  unsigned char state;
};
/// Asks the kernel (netlink NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY with an
/// inet_diag_req_v2) for the TCP socket whose own end is `source` and whose
/// other end is `destination`: `family` AF_INET or AF_INET6, addresses of 4
/// or 16 bytes in network order, ports in host order. A netlink socket of
/// its own, non-blocking; waits at most `timeout_ms` for the answer, which
/// must name exactly that socket. Returns 0 with `found` filled, or an error
/// number: ENOENT when the kernel lists no such socket, ETIMEDOUT when it
/// did not answer in time, EPROTO when the answer was about another socket
/// or malformed, or the error of a system call.
int chat_tcp_socket_lookup(int family, const void *source, unsigned short source_port,
                           const void *destination, unsigned short destination_port,
                           int timeout_ms, struct chat_tcp_socket *found);
/// The bytes a TCP socket sent that its peer has not acknowledged yet, its
/// FIN included (SIOCOUTQ, tcp(7)); -1 with errno set.
int chat_unacknowledged_bytes(int fd);
/// TCP_NODELAY (tcp(7)) on a TCP socket: each send(2) leaves at once,
/// rather than waiting, by Nagle's algorithm, for the peer to acknowledge
/// what went before; -1 with errno set.
int chat_send_without_delay(int fd);
/// Whether TCP_NODELAY is set on a TCP socket: 1 or 0; -1 with errno set.
int chat_sends_without_delay(int fd);
/// A copy, in this process, of descriptor `fd` of process `pid`
/// (pidfd_getfd(2); the caller needs the right to ptrace it): for tests
/// that ask the kernel about a socket the broker holds. -1 with errno set.
int chat_descriptor_of(pid_t pid, int fd);
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
/// A TCP connection to 127.0.0.1 (`family` AF_INET) or ::1 (AF_INET6) on
/// `port`, its socket made by the user `uid` and group `gid` (the caller
/// must be root), so that the kernel names that user as its owner
/// (sock_diag); see connect_as.c. Returns the descriptor (close-on-exec),
/// or -1 with errno set.
int chat_connect_loopback_as(int family, unsigned short port, uid_t uid, gid_t gid);
/// wcwidth(3): the terminal columns a character takes (-1: unprintable).
int chat_wcwidth(unsigned int character);

#endif
