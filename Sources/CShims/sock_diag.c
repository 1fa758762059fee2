// The owner of one TCP socket, asked of the kernel over netlink (sock_diag(7)):
// the netlink and inet_diag structs are C, and the request and its answer are
// a few lines of pointer arithmetic over them (NLMSG_OK, NLMSG_NEXT) that read
// better here than through Swift's unsafe pointers. See chatbroker(8),
// --irc-listen, for what the broker does with the answer.
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include "CShims.h"

// Each query's sequence number, so that an answer is known to be this one's.
static uint32_t last_sequence;

static long long milliseconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Whether a reply names the socket that was asked for, field by field.
static int same_socket(const struct inet_diag_msg *reply, const struct inet_diag_req_v2 *request,
                       size_t address_bytes) {
  return reply->idiag_family == request->sdiag_family &&
         reply->id.idiag_sport == request->id.idiag_sport &&
         reply->id.idiag_dport == request->id.idiag_dport &&
         memcmp(reply->id.idiag_src, request->id.idiag_src, address_bytes) == 0 &&
         memcmp(reply->id.idiag_dst, request->id.idiag_dst, address_bytes) == 0;
}

// One datagram of answers: 0 and `found` filled when it holds this socket,
// ENOENT when the kernel says there is none, EPROTO when it names another
// socket or is malformed, another error number from the kernel, or -1 when
// nothing in it answers this query (read on).
static int read_answer(const void *datagram, size_t length, uint32_t sequence,
                       const struct inet_diag_req_v2 *request, size_t address_bytes,
                       struct chat_tcp_socket *found) {
  int size = (int)length;
  for (const struct nlmsghdr *header = datagram; NLMSG_OK(header, size);
       header = NLMSG_NEXT(header, size)) {
    if (header->nlmsg_seq != sequence) continue;
    switch (header->nlmsg_type) {
    case NLMSG_ERROR: {
      if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) return EPROTO;
      const struct nlmsgerr *error = NLMSG_DATA(header);
      if (error->error == 0) continue;  // an acknowledgement, not asked for
      return error->error < 0 ? -error->error : EPROTO;
    }
    case NLMSG_DONE:
      return ENOENT;
    case SOCK_DIAG_BY_FAMILY: {
      if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) return EPROTO;
      const struct inet_diag_msg *reply = NLMSG_DATA(header);
      if (!same_socket(reply, request, address_bytes)) return EPROTO;
      found->uid = reply->idiag_uid;
      found->inode = reply->idiag_inode;
      found->state = reply->idiag_state;
      return 0;
    }
    default:
      continue;
    }
  }
  return -1;
}

int chat_tcp_socket_lookup(int family, const void *source, unsigned short source_port,
                           const void *destination, unsigned short destination_port,
                           int timeout_ms, struct chat_tcp_socket *found) {
  size_t address_bytes;
  if (family == AF_INET) address_bytes = 4;
  else if (family == AF_INET6) address_bytes = 16;
  else return EAFNOSUPPORT;

  struct {
    struct nlmsghdr header;
    struct inet_diag_req_v2 request;
  } query;
  memset(&query, 0, sizeof query);
  uint32_t sequence = __atomic_add_fetch(&last_sequence, 1, __ATOMIC_RELAXED);
  query.header.nlmsg_len = sizeof query;
  query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  // No NLM_F_DUMP: the kernel looks up this one socket by its 4-tuple
  // (established, timewait, request or listening, in that order) and
  // answers with it or with ENOENT.
  query.header.nlmsg_flags = NLM_F_REQUEST;
  query.header.nlmsg_seq = sequence;
  query.request.sdiag_family = (uint8_t)family;
  query.request.sdiag_protocol = IPPROTO_TCP;
  query.request.idiag_states = ~0U;  // every state: the caller judges it
  query.request.id.idiag_sport = htons(source_port);
  query.request.id.idiag_dport = htons(destination_port);
  memcpy(query.request.id.idiag_src, source, address_bytes);
  memcpy(query.request.id.idiag_dst, destination, address_bytes);
  query.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  query.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  // A socket of its own per query: no answer to an earlier query (one that
  // timed out) can be waiting in it, and nothing is shared between callers.
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);
  if (fd < 0) return errno;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  int result;
  ssize_t sent;
  do {
    sent = sendto(fd, &query, sizeof query, 0, (struct sockaddr *)&kernel, sizeof kernel);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    result = errno;
    goto done;
  }
  if ((size_t)sent != sizeof query) {
    result = EPROTO;
    goto done;
  }

  // The kernel answers within sendto (netlink's kernel side runs in the
  // caller's context), so the answer is normally waiting already; poll
  // bounds the wait for one that is not.
  long long deadline = milliseconds_now() + (timeout_ms > 0 ? timeout_ms : 0);
  for (;;) {
    long buffer[8192 / sizeof(long)];  // aligned for struct nlmsghdr
    struct sockaddr_nl sender;
    struct iovec vector = {.iov_base = buffer, .iov_len = sizeof buffer};
    struct msghdr message = {
      .msg_name = &sender, .msg_namelen = sizeof sender, .msg_iov = &vector, .msg_iovlen = 1};
    ssize_t received = recvmsg(fd, &message, 0);
    if (received < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        result = errno;
        goto done;
      }
      long long remaining = deadline - milliseconds_now();
      struct pollfd readable = {.fd = fd, .events = POLLIN};
      int ready = remaining > 0 ? poll(&readable, 1, (int)remaining) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        result = ready == 0 ? ETIMEDOUT : errno;
        goto done;
      }
      continue;
    }
    if (message.msg_flags & MSG_TRUNC) {
      result = EMSGSIZE;
      goto done;
    }
    // Only the kernel (port 0) answers; another process's datagram is not
    // an answer.
    if (message.msg_namelen < sizeof sender || sender.nl_pid != 0) continue;
    result = read_answer(buffer, (size_t)received, sequence, &query.request, address_bytes, found);
    if (result >= 0) goto done;
  }
done:
  close(fd);
  return result;
}
