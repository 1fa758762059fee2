import ChatClient
import Foundation
import LineProtocol
import Posix
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// chatsh's first exchange with what answers on the socket: HELLO, and the
/// PING that goes with the wait for it (BrokerConnection.greeting).
@Suite struct GreetingTests {
  /// A listener at a fresh path that writes `lines` to the first client,
  /// after reading its first line (the PING), and returns what it read.
  /// It serves on a thread of its own, not on Dispatch's shared pool,
  /// where it could wait behind other tests' blocking work.
  private func serve(_ lines: String) throws -> (path: String, read: () -> String) {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/fake.sock"
    let listener = try UnixSocket.bind(path: path)
    // UnixSocket.bind makes the non-blocking listener the broker's poll
    // loop wants; this fake waits in accept(2) instead, which on a
    // non-blocking socket returns EAGAIN if its thread gets there before
    // the client connects (and then the fake never answered).
    _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) & ~O_NONBLOCK)
    let box = LockedText()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      _ = directory
      let client = accept(listener, nil, nil)
      var buffer = [UInt8](repeating: 0, count: 256)
      let count = read(client, &buffer, buffer.count)
      box.set(String(decoding: buffer[..<max(count, 0)], as: UTF8.self))
      _ = lines.utf8CString.withUnsafeBufferPointer { write(client, $0.baseAddress, $0.count - 1) }
      done.wait()
      close(client)
      close(listener)
    }
    return (
      path,
      {
        done.signal()
        return box.text
      }
    )
  }

  @Test("a direct message between HELLO and the PING's answer is given back, and the answer is not")
  func eventBeforeThePingsAnswerIsKept() throws {
    let fake = try serve(
      "HELLO 1.3.0 alice :welcome\nMSG @bob 5 2026-11-30T18:00:00.000Z bob :psst\nOK PING chatsh\n"
        + "OK ROOMS 0\n")
    let connection = try BrokerConnection(path: fake.path)
    let first = try connection.greeting(timeoutSeconds: 5)
    #expect(first == .event(.hello(version: "1.3.0", user: "alice", text: "welcome")))
    #expect(try connection.nextLine(timeoutSeconds: 5)?.message?.text == "psst")
    #expect(try connection.nextLine(timeoutSeconds: 5)?.okFields == ["0"])
    #expect(fake.read() == "PING chatsh\n")
  }

  @Test("a first line that is not HELLO is named at once, and said to be IRC when it is")
  func notHelloIsNamed() throws {
    let fake = try serve(":chatbroker PONG chatbroker chatsh\r\n")
    let connection = try BrokerConnection(path: fake.path)
    do {
      _ = try connection.greeting(timeoutSeconds: 5)
      Issue.record("the greeting was taken for HELLO")
    } catch {
      #expect(error.description.contains("is not a chatbroker line socket"), "\(error)")
      #expect(error.description.contains("IRC socket"))
    }
    _ = fake.read()
  }
}

extension GreetingTests {
  @Test(
    "signals that interrupt the wait do not stretch the bound of silence: a mute broker times out on time (real time)"
  )
  func signalsDoNotStretchTheTimeoutRealTime() throws {
    let fake = try serve("")
    let connection = try BrokerConnection(path: fake.path)
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in }
    sigemptyset(&action.sa_mask)
    sigaction(SIGUSR2, &action, nil)
    let waiter = pthread_self()
    let stop = DispatchSemaphore(value: 0)
    // Every 50 ms for up to 5 s, a signal interrupts this thread's poll(2).
    Thread.detachNewThread {
      for _ in 0..<100 where stop.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
        pthread_kill(waiter, SIGUSR2)
      }
    }
    let started = MonotonicClock.seconds()
    do {
      _ = try connection.greeting(timeoutSeconds: 1)
      Issue.record("a broker that never answered was taken for one")
    } catch {
      #expect(error.description.contains("did not answer within 1 second"), "\(error)")
    }
    let waited = MonotonicClock.seconds() - started
    stop.signal()
    #expect(waited < 3, "timed out after \(waited) s, not about 1 s")
    _ = fake.read()
  }
}

private final class LockedText: @unchecked Sendable {
  private let lock = NSLock()
  private var value = ""
  var text: String {
    lock.lock()
    defer { lock.unlock() }
    return value
  }
  func set(_ text: String) {
    lock.lock()
    value = text
    lock.unlock()
  }
}
