// limitserver: the ceiling of this machine for chatbench fanout. A bare epoll
// server on a Unix socket that speaks just enough of the line protocol
// (chatbroker(7): HELLO, JOIN, SAY, MSG) for chatbench's fan-out load, and
// does only what no broker can avoid: it reads the requests, encodes each MSG
// once, copies it into every other member's output and flushes each
// connection with one send(2) per pass of its loop. No journal, history,
// ids worth keeping, access checks or limits; one clock read per pass.
// What it delivers is what a broker on this machine could deliver at best;
// chatbench prints chatbroker's and Redis's figures as ratios of it.
//
//   limitserver SOCKETPATH
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

// Requests longer than this are cut: chatbench's are about 120 bytes.
enum { INPUT_BYTES = 65536, ROOM_NAME_BYTES = 64, EVENTS_PER_WAIT = 512 };

typedef struct {
  char *bytes;
  size_t count, capacity;
} Buffer;

typedef struct {
  int fd;
  char input[INPUT_BYTES];
  size_t inputCount;
  Buffer output;
  // Listed in `dirty` to flush at the end of this pass.
  int isDirty;
  // What did not fit in the socket waits for EPOLLOUT.
  int waitsForWritable;
} Connection;

typedef struct {
  char name[ROOM_NAME_BYTES];
  int *members;
  size_t count, capacity;
} Room;

static Connection **connections;  // by descriptor
static size_t connectionSlots;
static int *dirty;
static size_t dirtyCount, dirtyCapacity;
static Room *rooms;
static size_t roomCount;
static int poller;
static unsigned long long nextID = 1;
static const char *userName = "root";
// The pass's time, rendered once per pass as chatbroker(7) writes times.
static char now[96];

static void *allocate(void *old, size_t bytes) {
  void *grown = realloc(old, bytes);
  if (!grown) {
    perror("limitserver: realloc");
    exit(70);
  }
  return grown;
}

static void append(Buffer *buffer, const char *bytes, size_t count) {
  if (buffer->count + count > buffer->capacity) {
    buffer->capacity = (buffer->count + count) * 2;
    buffer->bytes = allocate(buffer->bytes, buffer->capacity);
  }
  memcpy(buffer->bytes + buffer->count, bytes, count);
  buffer->count += count;
}

static void queue(Connection *connection, const char *bytes, size_t count) {
  append(&connection->output, bytes, count);
  if (!connection->isDirty) {
    connection->isDirty = 1;
    if (dirtyCount == dirtyCapacity) {
      dirtyCapacity = dirtyCapacity ? dirtyCapacity * 2 : 1024;
      dirty = allocate(dirty, dirtyCapacity * sizeof *dirty);
    }
    dirty[dirtyCount++] = connection->fd;
  }
}

static void watch(Connection *connection, int writable) {
  if (connection->waitsForWritable == writable) return;
  connection->waitsForWritable = writable;
  struct epoll_event event = {
      .events = EPOLLIN | (writable ? EPOLLOUT : 0), .data.fd = connection->fd};
  epoll_ctl(poller, EPOLL_CTL_MOD, connection->fd, &event);
}

static Room *room(const char *name, size_t length) {
  if (length >= ROOM_NAME_BYTES) length = ROOM_NAME_BYTES - 1;
  for (size_t index = 0; index < roomCount; index++) {
    if (strlen(rooms[index].name) == length && !memcmp(rooms[index].name, name, length)) {
      return &rooms[index];
    }
  }
  rooms = allocate(rooms, (roomCount + 1) * sizeof *rooms);
  Room *created = &rooms[roomCount++];
  memset(created, 0, sizeof *created);
  memcpy(created->name, name, length);
  return created;
}

static void leaveRooms(int fd) {
  for (size_t index = 0; index < roomCount; index++) {
    Room *each = &rooms[index];
    for (size_t member = 0; member < each->count; member++) {
      if (each->members[member] == fd) {
        each->members[member] = each->members[--each->count];
        break;
      }
    }
  }
}

static void closeConnection(Connection *connection) {
  int fd = connection->fd;
  leaveRooms(fd);
  epoll_ctl(poller, EPOLL_CTL_DEL, fd, NULL);
  close(fd);
  free(connection->output.bytes);
  free(connection);
  connections[fd] = NULL;
}

// The word after the verb and where the rest of the line starts.
static size_t word(const char *line, size_t length, size_t start, size_t *next) {
  size_t end = start;
  while (end < length && line[end] != ' ') end++;
  *next = end < length ? end + 1 : end;
  return end - start;
}

static void serve(Connection *connection, const char *line, size_t length) {
  char reply[INPUT_BYTES + 256];
  size_t rest;
  if (length > 5 && !strncasecmp(line, "JOIN ", 5)) {
    size_t nameLength = word(line, length, 5, &rest);
    Room *joined = room(line + 5, nameLength);
    if (joined->count == joined->capacity) {
      joined->capacity = joined->capacity ? joined->capacity * 2 : 16;
      joined->members = allocate(joined->members, joined->capacity * sizeof *joined->members);
    }
    joined->members[joined->count++] = connection->fd;
    int count = snprintf(
        reply, sizeof reply, "OK JOIN %s %zu\n", joined->name, joined->count);
    queue(connection, reply, count);
  } else if (length > 4 && !strncasecmp(line, "SAY ", 4)) {
    size_t nameLength = word(line, length, 4, &rest);
    Room *target = room(line + 4, nameLength);
    // The text is the rest of the line, after an optional ':'.
    if (rest < length && line[rest] == ':') rest++;
    char id[16];
    int idLength = 0;
    char digits[16];
    for (unsigned long long value = nextID++; value; value /= 36) {
      digits[idLength++] = "0123456789abcdefghijklmnopqrstuvwxyz"[value % 36];
    }
    for (int index = 0; index < idLength; index++) id[index] = digits[idLength - 1 - index];
    id[idLength] = 0;
    int count = snprintf(reply, sizeof reply, "OK SAY %s %s\n", id, now);
    queue(connection, reply, count);
    // The one encoding of the line, copied to every other member.
    count = snprintf(
        reply, sizeof reply, "MSG %s %s %s %s :%.*s\n", target->name, id, now, userName,
        (int)(length - rest), line + rest);
    for (size_t member = 0; member < target->count; member++) {
      if (target->members[member] != connection->fd) {
        queue(connections[target->members[member]], reply, count);
      }
    }
  } else {
    size_t verbLength = word(line, length, 0, &rest);
    int count = snprintf(reply, sizeof reply, "OK %.*s\n", (int)verbLength, line);
    queue(connection, reply, count);
  }
}

static void readRequests(Connection *connection) {
  for (;;) {
    ssize_t count = read(
        connection->fd, connection->input + connection->inputCount,
        sizeof connection->input - connection->inputCount);
    if (count < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (count <= 0) return closeConnection(connection);
    connection->inputCount += count;
    char *line = connection->input, *end = line + connection->inputCount, *newline;
    while ((newline = memchr(line, '\n', end - line))) {
      serve(connection, line, newline - line);
      line = newline + 1;
    }
    // A line longer than the buffer is cut, not waited for.
    if (line == connection->input && end == connection->input + sizeof connection->input) {
      line = end;
    }
    connection->inputCount = end - line;
    memmove(connection->input, line, connection->inputCount);
  }
}

static void flush(Connection *connection) {
  size_t sent = 0;
  while (sent < connection->output.count) {
    ssize_t count = send(
        connection->fd, connection->output.bytes + sent, connection->output.count - sent,
        MSG_NOSIGNAL);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0 && errno == EAGAIN) break;
    if (count <= 0) return closeConnection(connection);
    sent += count;
  }
  memmove(connection->output.bytes, connection->output.bytes + sent, connection->output.count - sent);
  connection->output.count -= sent;
  watch(connection, connection->output.count > 0);
}

static void accept_(int listener) {
  int fd;
  while ((fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
    if ((size_t)fd >= connectionSlots) {
      size_t slots = (fd + 1) * 2;
      connections = allocate(connections, slots * sizeof *connections);
      memset(connections + connectionSlots, 0, (slots - connectionSlots) * sizeof *connections);
      connectionSlots = slots;
    }
    Connection *connection = calloc(1, sizeof *connection);
    if (!connection) {
      close(fd);
      continue;
    }
    connection->fd = fd;
    connections[fd] = connection;
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event);
    char hello[256];
    int count = snprintf(hello, sizeof hello, "HELLO 1.0.0 %s :welcome\n", userName);
    queue(connection, hello, count);
  }
}

static void renderNow(void) {
  struct timespec clock;
  clock_gettime(CLOCK_REALTIME, &clock);
  struct tm parts;
  gmtime_r(&clock.tv_sec, &parts);
  snprintf(
      now, sizeof now, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", parts.tm_year + 1900,
      parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
      clock.tv_nsec / 1000000);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: limitserver SOCKETPATH\n");
    return 64;
  }
  struct passwd *me = getpwuid(geteuid());
  if (me) userName = strdup(me->pw_name);
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
  unlink(argv[1]);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) {
    perror("limitserver: bind");
    return 71;
  }
  poller = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
  epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
  struct epoll_event events[EVENTS_PER_WAIT];
  for (;;) {
    int ready = epoll_wait(poller, events, EVENTS_PER_WAIT, -1);
    renderNow();
    for (int index = 0; index < ready; index++) {
      int fd = events[index].data.fd;
      if (fd == listener) {
        accept_(listener);
        continue;
      }
      Connection *connection = connections[fd];
      if (!connection) continue;
      if (events[index].events & EPOLLOUT) {
        flush(connection);
        if (!connections[fd]) continue;
      }
      if (events[index].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) readRequests(connection);
    }
    // One send(2) per connection with output, once per pass.
    size_t count = dirtyCount;
    dirtyCount = 0;
    for (size_t index = 0; index < count; index++) {
      Connection *connection = connections[dirty[index]];
      if (!connection || !connection->isDirty) continue;
      connection->isDirty = 0;
      flush(connection);
    }
  }
}
