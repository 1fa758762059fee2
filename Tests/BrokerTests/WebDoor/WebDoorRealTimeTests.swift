import Dispatch
import Foundation
import Glibc
import Posix
import ProtocolFuzz
import TestSupport
import Testing

/// The web door's fairness and bounds in real time (chatbroker(8), THE
/// WEB DOOR): a page is a client like any other, served in turns, so one
/// that floods slows nobody else; a slow request head is closed.
@Suite("The web door in real time", .serialized, UnixUsers.required)
struct WebDoorRealTimeTests {
  @Test(
    "pages flooding requests and pings do not slow another user's PING: p99 under 50 ms (RealTime)"
  )
  func floodRealTime() throws {
    let (broker, port) = try WebDoorTests.door(["--max-line-bytes", "4096"])
    let pinger = try broker.connect(as: "cbtest2")
    let token = try broker.webToken(for: "cbtest1")
    // A room with a long history, so that each HISTORY is heavy work.
    let writer = try broker.connect(as: "cbtest3")
    _ = try writer.pipeline(["JOIN #flood"] + (0..<1000).map { "SAY #flood :line \($0)" })
    // One page pipelines HISTORY of 200 lines; another floods pings;
    // a third sends frames over the limit. All read what comes back.
    let requests = (0..<64).flatMap { _ in WebSocketFrames.text("HISTORY #flood 200") }
    let pings = (0..<512).flatMap { _ in
      WebSocketFrames.encode(opcode: WebSocketFrames.ping, payload: [1, 2, 3])
    }
    let long = WebSocketFrames.encode(
      opcode: WebSocketFrames.text, payload: [UInt8](repeating: 65, count: 20_000))
    let pages = try (0..<3).map { _ in
      let page = try WebDoorClient(port: port, as: "cbtest1")
      try page.open(token: token)
      return page
    }
    let floods = zip(pages, [requests, pings, long]).map { page, batch in
      PageFlood(fd: page.fd, batch: batch, keep: page)
    }
    defer { for flood in floods { flood.stop() } }
    try waitUntil(timeout: 10, "the floods to send 4 MB") {
      floods.allSatisfy { $0.sent > 1 << 20 }
    }
    var seconds: [Double] = []
    let end = DispatchTime.now().uptimeNanoseconds + 3_000_000_000
    while seconds.count < 100 || DispatchTime.now().uptimeNanoseconds < end {
      let number = seconds.count
      let started = DispatchTime.now().uptimeNanoseconds
      #expect(try pinger.request("PING \(number)") == ["OK PING \(number)"])
      seconds.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
      if seconds.count >= 100_000 { break }
    }
    let sent = floods.map(\.sent)
    let received = floods.map(\.received)
    for flood in floods { flood.stop() }
    seconds.sort()
    let p99 = seconds[min(seconds.count - 1, seconds.count * 99 / 100)]
    let summary = String(
      format: "%d PINGs, p50 %.2f ms, p99 %.2f ms, max %.2f ms; the pages sent %@ bytes, got %@",
      seconds.count, seconds[seconds.count / 2] * 1000, p99 * 1000, seconds.last! * 1000,
      "\(sent)", "\(received)")
    print("PING during web door floods: \(summary)")
    #expect(p99 < 0.050, "\(summary)")
    #expect(received.allSatisfy { $0 > 0 }, "every page was answered: \(summary)")
  }

  @Test(
    "the handshake takes well under a millisecond of the broker: upgrade, TOKEN and HELLO (RealTime)"
  )
  func handshakeRealTime() throws {
    let (broker, port) = try WebDoorTests.door()
    let token = try broker.webToken(for: "cbtest1")
    let rounds = 200
    var connect: [Double] = []
    var handshake: [Double] = []
    for _ in 0..<rounds {
      let started = DispatchTime.now().uptimeNanoseconds
      let page = try WebDoorClient(port: port, as: "cbtest1")
      let connected = DispatchTime.now().uptimeNanoseconds
      try page.open(token: token)
      let greeted = DispatchTime.now().uptimeNanoseconds
      connect.append(Double(connected - started) / 1e6)
      handshake.append(Double(greeted - connected) / 1e6)
      try page.send(WebSocketFrames.close())
      _ = try page.expectClose()
    }
    handshake.sort()
    let summary = String(
      format:
        "%d handshakes (upgrade, TOKEN, HELLO): median %.3f ms, p99 %.3f ms; the test's connect as another user (a fork) %.2f ms",
      rounds, handshake[rounds / 2], handshake[rounds * 99 / 100], connect.sorted()[rounds / 2])
    print("web door: \(summary)")
    #expect(handshake[rounds / 2] < 5, "\(summary)")
  }

  @Test(
    "a request head trickling in, or an upgrade without a token, is closed after 10 s; others are served meanwhile (RealTime)"
  )
  func slowlorisRealTime() throws {
    let (broker, port) = try WebDoorTests.door()
    let trickle = try WebDoorClient(port: port, as: "cbtest1")
    let silent = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try silent.upgrade().status == 101)
    let started = Date()
    let head = Array("GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".utf8)
    var closedAfter: Double?
    var index = 0
    while closedAfter == nil && Date().timeIntervalSince(started) < 20 {
      let byte = index < head.count ? head[index] : UInt8(ascii: "a")
      index += 1
      let written = [byte].withUnsafeBytes {
        Glibc.send(trickle.fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL))
      }
      if written < 0 { closedAfter = Date().timeIntervalSince(started) }
      // Another user is served while it trickles.
      if index % 20 == 0 {
        #expect(try WebDoorClient(port: port, as: "cbtest2").get("/").status == 200)
      }
      usleep(100_000)
    }
    let after = try #require(closedAfter, "the trickling connection was never closed")
    #expect(after >= 9.5 && after < 13, "closed after \(after) s")
    let (code, reason, _) = try silent.expectClose()
    #expect(code == 1001)
    #expect(reason == "closed before a token was shown")
    try broker.waitForLog(#"reason="no request, or no token, within 10 s""#)
  }
}

/// A page that sends `batch` again and again and reads all it gets, on
/// threads of its own, until ``stop()``.
private final class PageFlood: @unchecked Sendable {
  private let lock = NSLock()
  private var sentBytes = 0
  private var receivedBytes = 0
  private var stopping = false
  private let done = DispatchGroup()
  private let keep: WebDoorClient

  init(fd: Int32, batch: [UInt8], keep: WebDoorClient) {
    self.keep = keep
    done.enter()
    Thread.detachNewThread { [self] in
      while !isStopping {
        let written = batch.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if written <= 0 { break }
        lock.withLock { sentBytes += written }
      }
      done.leave()
    }
    done.enter()
    Thread.detachNewThread { [self] in
      var buffer = [UInt8](repeating: 0, count: 65536)
      while !isStopping {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 100) >= 0 else { break }
        guard poller.revents != 0 else { continue }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        lock.withLock { receivedBytes += count }
      }
      done.leave()
    }
  }

  var sent: Int { lock.withLock { sentBytes } }
  var received: Int { lock.withLock { receivedBytes } }
  private var isStopping: Bool { lock.withLock { stopping } }

  func stop() {
    lock.withLock { stopping = true }
    shutdown(keep.fd, Int32(SHUT_RDWR))
    _ = done.wait(timeout: .now() + 10)
  }
}
