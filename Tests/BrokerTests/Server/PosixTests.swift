import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// The support layer every program stands on: what a system call's caller
/// gets back, and the socket, path and exit-status helpers.
@Suite("Posix: system calls, descriptors, Unix sockets")
struct PosixTests {
  @Test("reading an empty non-blocking socket says 'would block', not an error")
  func wouldBlockIsAResult() throws {
    var pair: [Int32] = [-1, -1]
    #expect(
      socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0, &pair) == 0)
    defer { for fd in pair { FileDescriptor(rawValue: fd).close() } }
    var byte: UInt8 = 0
    let empty = try ioCall("read") { read(pair[0], &byte, 1) }
    guard case .wouldBlock = empty else {
      Issue.record("expected .wouldBlock, got \(empty)")
      return
    }
    try FileDescriptor(rawValue: pair[1]).writeAll("x")
    let full = try ioCall("read") { read(pair[0], &byte, 1) }
    guard case .processed(1) = full else {
      Issue.record("expected one byte, got \(full)")
      return
    }
    #expect(byte == UInt8(ascii: "x"))
  }

  @Test("a failed call throws a SystemError that names the call, the subject and errno in words")
  func failureNamesTheCall() {
    #expect(throws: SystemError.self) { try systemCall("close", subject: "fd -1") { close(-1) } }
    do {
      try systemCall("close", subject: "fd -1") { close(-1) }
    } catch {
      #expect(error.errno == EBADF)
      #expect(error.description == "close fd -1: Bad file descriptor")
    }
  }

  @Test("writeAll writes every byte of a text larger than a pipe holds at once")
  func writeAllWritesEverything() throws {
    var ends: [Int32] = [-1, -1]
    #expect(pipe(&ends) == 0)
    let reader = FileDescriptor(rawValue: ends[0])
    let writer = FileDescriptor(rawValue: ends[1])
    defer { reader.close() }
    let text = String(repeating: "0123456789abcdef", count: 64 * 1024)  // 1 MiB
    Thread {
      try? writer.writeAll(text)
      writer.close()
    }.start()
    // Read to end of file, each wait bounded: a writer that stopped short
    // shows as fewer bytes, one that hangs as a timeout.
    var total = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      var poller = pollfd(fd: reader.rawValue, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 10_000) == 1 else {
        Issue.record("no end of file within 10 s, after \(total) bytes")
        return
      }
      let count = try systemCall("read") { read(reader.rawValue, &chunk, chunk.count) }
      if count == 0 { break }
      total += count
    }
    #expect(total == text.utf8.count)
  }

  @Test("a socket path too long for sun_path is refused with ENAMETOOLONG, never cut short")
  func longSocketPath() {
    let path = "/tmp/" + String(repeating: "x", count: 200) + "/chatbroker.sock"
    #expect(!UnixSocket.fits(path))
    do {
      _ = try UnixSocket.connect(to: path)
      Issue.record("connected to a path that cannot exist")
    } catch {
      #expect(error.errno == ENAMETOOLONG)
      #expect(error.call == "connect")
    }
    #expect(!UnixSocket.isLive(path))
  }

  @Test("readAll reads a procfs file to its end, past the 4 KiB a sized read stops at")
  func readAllReadsProcToTheEnd() throws {
    let maps = try FileDescriptor.readAll(path: "/proc/self/maps")
    #expect(maps.count > 4096, "this process maps more than 4 KiB of lines")
    #expect(maps.last == UInt8(ascii: "\n"), "the last line is whole")
    #expect(throws: SystemError.self) { try FileDescriptor.readAll(path: "/nonexistent/file") }
  }

  @Test("a bound socket is live until it is closed, then a new bind replaces its file")
  func bindConnectLive() throws {
    let directory =
      FileManager.default.temporaryDirectory.path
      + "/posix-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/nested/test.sock"
    let listener = try UnixSocket.bind(path: path)
    #expect(UnixSocket.isLive(path))
    #expect(throws: SystemError.self) { _ = try UnixSocket.bind(path: path) }
    close(listener)
    // A child another test is starting in this process holds a copy of
    // every descriptor until its exec closes them (close-on-exec): on a
    // loaded machine the socket can stay live that long, and no longer.
    try waitUntil(timeout: 10, "the closed socket to stop answering") { !UnixSocket.isLive(path) }
    let again = try UnixSocket.bind(path: path)
    close(again)
  }

  @Test("the default socket is per user unless XDG_RUNTIME_DIR names a runtime directory")
  func defaultPaths() {
    #expect(
      DefaultPaths.perUserSocket(environment: [:], uid: 1000)
        == "/tmp/chatbroker-1000/chatbroker.sock")
    #expect(
      DefaultPaths.perUserSocket(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000)
        == "/run/user/1000/chatbroker/chatbroker.sock")
    #expect(DefaultPaths.systemSocket == "/run/chatbroker/chatbroker.sock")
  }

  @Test("exit statuses are sysexits(3)'s numbers")
  func sysexits() {
    let expected: [(ExitCode, Int32)] = [
      (.usage, 64), (.dataError, 65), (.noInput, 66), (.unavailable, 69), (.software, 70),
      (.systemError, 71), (.cannotCreate, 73), (.ioError, 74), (.temporaryFailure, 75),
      (.noPermission, 77), (.configuration, 78),
    ]
    for (code, number) in expected { #expect(code.rawValue == number, "\(code)") }
  }
}
