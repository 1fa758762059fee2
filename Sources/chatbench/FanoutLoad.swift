import CShims
import Glibc
import LineProtocol

/// The fan-out load: one sender, N receivers in one room, a bounded window
/// of messages in flight, all on one thread around one epoll instance.
///
/// One thread, so that on a machine of two cores the client takes one and
/// the server under test the other. The client that ran here before had a
/// sender thread (sleeping 50 µs at a time when its window was full) and a
/// reader thread polling every receiver: its two threads competed with the
/// server for the cores, and at N = 10 they, not the server, set the pace:
/// they drove the limit server to 3.3-3.6 M deliveries/s where this one
/// reached 4.1-7.6 M and the C reference client (one thread, a clock read
/// and a parse per line) 3.3-5.2 M, in the same minutes. Per delivery it
/// does one `memchr` over bytes read in 256 KiB at a time: no parsing, no
/// clock.
struct FanoutLoad {
  enum Wire {
    /// chatbroker's line protocol (and the limit server's).
    case chat
    /// Redis pub/sub in RESP.
    case redis
    /// IRC on 127.0.0.1: a channel's PRIVMSGs (IRCFanoutClients.swift).
    case irc

    func subscribe() -> [UInt8] {
      self == .chat ? LineCodec.encode(.join(room)) : Array("SUBSCRIBE bench\r\n".utf8)
    }

    func publish(_ text: String) -> [UInt8] {
      switch self {
      case .chat: LineCodec.encode(.say(.room(room), text: text))
      case .redis: Array("PUBLISH bench \(text)\r\n".utf8)
      case .irc: Array("PRIVMSG \(IRCFanoutClients.channel) :\(text)\r\n".utf8)
      }
    }

    private var room: RoomName { RoomName("#bench")! }

    /// Lines of handshake a receiver reads before messages flow.
    var greetingLines: Int { self == .chat ? 2 : 3 }
    var senderGreetingLines: Int { self == .chat ? 1 : 0 }
    /// The byte that occurs once in each delivered message and nowhere
    /// else of it: a line's LF, or the `*` that starts a RESP push
    /// (`*3\r\n$7\r\nmessage\r\n...`, seven LFs): counting it costs one
    /// `memchr` match per message for both. IRC has none (a receiver also
    /// gets other lines, and PINGs to answer): ``IRCDeliveryScanner``
    /// looks for the PRIVMSG itself.
    var messageMarker: UInt8 { self == .chat ? UInt8(ascii: "\n") : UInt8(ascii: "*") }
  }

  let wire: Wire
  let receivers: Int
  let messages: Int
  /// Messages the sender may be ahead of the slowest receiver.
  let window: Int

  /// Deliveries per second: messages × receivers over the time from the
  /// first SAY to the last delivery.
  func run(on server: ServerUnderTest) throws -> Double {
    let (receiverFDs, sender) = try connect(to: server)
    defer { for fd in receiverFDs + [sender] { close(fd) } }
    return try measure(receiverFDs: receiverFDs, sender: sender)
  }

  /// The receivers, each in the room, and the sender.
  private func connect(to server: ServerUnderTest) throws -> (receivers: [Int32], sender: Int32) {
    if wire == .irc {
      guard let port = server.ircPort else { throw BenchError("the server takes no IRC") }
      return try IRCFanoutClients.connect(port: port, receivers: receivers)
    }
    let receiverFDs = try (0..<receivers).map { _ in try connectUnix(server.socketPath) }
    do {
      for fd in receiverFDs { writeAll(fd, wire.subscribe()) }
      for fd in receiverFDs { _ = try readLines(fd, count: wire.greetingLines) }
      let sender = try connectUnix(server.socketPath)
      if wire.senderGreetingLines > 0 {
        do {
          _ = try readLines(sender, count: wire.senderGreetingLines)
        } catch {
          close(sender)
          throw error
        }
      }
      return (receiverFDs, sender)
    } catch {
      for fd in receiverFDs { close(fd) }
      throw error
    }
  }

  /// The window is the same on every wire: the sender may be `window`
  /// messages ahead of the receiver that has had the fewest, counted as
  /// they arrive. No wire's acknowledgement paces it (Redis and IRC have
  /// none to a PUBLISH or PRIVMSG, nor ngIRCd echo-message), so all are
  /// measured alike.
  private func measure(receiverFDs: [Int32], sender: Int32) throws -> Double {
    let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard poller >= 0 else { throw BenchError("epoll_create1 failed") }
    defer { close(poller) }
    // Receivers carry their index; the sender carries `receivers`.
    for (index, fd) in (receiverFDs + [sender]).enumerated() {
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(index)))
      guard epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event) == 0 else {
        throw BenchError("epoll_ctl failed")
      }
    }
    var sendsWritable = false
    func watchSender(writable: Bool) {
      guard writable != sendsWritable else { return }
      sendsWritable = writable
      var event = epoll_event(
        events: EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0),
        data: epoll_data_t(u64: UInt64(receivers)))
      _ = epoll_ctl(poller, EPOLL_CTL_MOD, sender, &event)
    }

    // Every request is the same line: the stream the sender writes is that
    // line repeated, read out of a chunk of 256 of them at any offset.
    let line = wire.publish(FanoutBenchmark.text)
    let chunk = Array(repeatElement(line, count: 256).joined())
    let totalBytes = messages * line.count
    var writtenBytes = 0
    var allowedMessages = 0
    var seen = [Int](repeating: 0, count: receivers)
    // The slowest receiver's count, found again only when a receiver that
    // had it moves on.
    var slowest = 0
    var atSlowest = receivers
    var finished = 0
    // Reads land `IRCDeliveryScanner.overlap` bytes in, after room for the
    // end of the read before, which IRC's scan needs.
    let allocation = UnsafeMutableRawBufferPointer.allocate(
      byteCount: IRCDeliveryScanner.overlap + 256 * 1024, alignment: 64)
    defer { allocation.deallocate() }
    let buffer = UnsafeMutableRawBufferPointer(rebasing: allocation[IRCDeliveryScanner.overlap...])
    var scanners = [IRCDeliveryScanner](
      repeating: IRCDeliveryScanner(), count: wire == .irc ? receivers + 1 : 0)
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 512)
    defer { events.deallocate() }
    let marker = Int32(wire.messageMarker)

    let started = monotonicNanoseconds()
    while finished < receivers {
      // Write what the window allows, as far as the socket takes it.
      allowedMessages = min(messages, slowest + window)
      var blocked = false
      while writtenBytes < allowedMessages * line.count {
        let offset = writtenBytes % chunk.count
        let length = min(allowedMessages * line.count - writtenBytes, chunk.count - offset)
        let sent = chunk.withUnsafeBytes {
          Glibc.send(sender, $0.baseAddress! + offset, length, Int32(MSG_NOSIGNAL))
        }
        if sent > 0 {
          writtenBytes += sent
        } else if sent < 0 && (errno == EAGAIN || errno == EINTR) {
          blocked = errno == EAGAIN
          break
        } else {
          throw BenchError("the server closed the sender")
        }
      }
      watchSender(writable: blocked && writtenBytes < totalBytes)
      let ready = epoll_wait(poller, events.baseAddress, Int32(events.count), 1000)
      guard ready >= 0 else {
        if errno == EINTR { continue }
        throw BenchError("epoll_wait failed")
      }
      for event in events.prefix(Int(ready)) {
        let index = Int(event.data.u64)
        if index == receivers {
          // The sender's own replies (OK SAY, or Redis's counts): read
          // and dropped so they never fill its socket; an IRC server's
          // PINGs are answered.
          while true {
            let count = Glibc.read(sender, buffer.baseAddress, buffer.count)
            guard count > 0 else { break }
            if wire == .irc {
              _ = scanners[index].scan(allocation.baseAddress!, count: count, answering: sender)
            }
          }
          continue
        }
        let fd = receiverFDs[index]
        let before = seen[index]
        while true {
          let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
          guard count > 0 else {
            if count == 0 { throw BenchError("the server closed a receiver") }
            break
          }
          seen[index] +=
            wire == .irc
            ? scanners[index].scan(allocation.baseAddress!, count: count, answering: fd)
            : occurrences(of: marker, in: buffer.baseAddress!, length: count)
          if count < buffer.count { break }
        }
        if before < messages && seen[index] >= messages { finished += 1 }
        if before == slowest && seen[index] > before {
          atSlowest -= 1
          if atSlowest == 0 {
            slowest = seen.min()!
            atSlowest = seen.reduce(0) { $0 + ($1 == slowest ? 1 : 0) }
          }
        }
      }
    }
    let seconds = Double(monotonicNanoseconds() - started) / 1e9
    return Double(messages * receivers) / seconds
  }
}

/// How often `byte` occurs in the `length` bytes at `base`.
private func occurrences(of byte: Int32, in base: UnsafeMutableRawPointer, length: Int) -> Int {
  var found = 0
  var cursor = UnsafeRawPointer(base)
  let end = cursor + length
  while cursor < end, let match = memchr(cursor, byte, end - cursor) {
    found += 1
    cursor = UnsafeRawPointer(match) + 1
  }
  return found
}
