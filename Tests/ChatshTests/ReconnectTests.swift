import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// chatsh(1): a broker that restarts under a running `say`, `tail` or chat
/// screen loses nothing and shows nothing twice.
@Suite struct ReconnectTests {
  private func texts(_ broker: BrokerProcess, _ target: String) throws -> [String] {
    let history = try broker.chatsh("history", "-n", "1000", target)
    return history.output.split(separator: "\n").map {
      String($0.split(separator: "\t").last ?? "")
    }
  }

  @Test(
    "a slow say pipe across a broker restart: nothing lost, nothing twice, in order (real time)")
  func sayPipeAcrossRestartRealTime() throws {
    let broker = try BrokerProcess().start()
    let say = try Running.chatsh(["--socket", broker.socketPath, "say", "#builds"])
    let lines = (1...40).map { "step \($0) of 40" }
    for line in lines.prefix(15) {
      say.write(line + "\n")
      usleep(20_000)
    }
    try waitUntil(timeout: 10, "the first 15 lines in #builds") {
      (try? texts(broker, "#builds").count) == 15
    }
    try broker.restart(down: 1.5)
    for line in lines.dropFirst(15) {
      say.write(line + "\n")
      usleep(20_000)
    }
    say.closeInput()
    #expect(say.waitForExit(within: 30) == 0, "\(say.err.current)")
    #expect(try texts(broker, "#builds") == lines)
    #expect(say.err.current.contains("reconnected"))
  }

  @Test("a say pipe whose broker is killed mid-burst sends each line exactly once (real time)")
  func sayPipeAcrossCrashRealTime() throws {
    let broker = try BrokerProcess().start()
    let say = try Running.chatsh(["--socket", broker.socketPath, "say", "#burst"])
    let lines = (1...900).map { "line \($0)" }
    say.write(lines.prefix(600).map { $0 + "\n" }.joined())
    try waitUntil(timeout: 10, "the burst to reach #burst") {
      ((try? texts(broker, "#burst").count) ?? 0) > 0
    }
    try broker.restart(down: 0.5, crash: true)
    say.write(lines.dropFirst(600).map { $0 + "\n" }.joined())
    say.closeInput()
    #expect(say.waitForExit(within: 30) == 0, "\(say.err.current)")
    #expect(try texts(broker, "#burst") == lines)
  }

  @Test("say waits --wait seconds for a broker that is not there, then exits 69 (real time)")
  func sayGivesUpAfterWaitRealTime() throws {
    let broker = try BrokerProcess().start()
    try broker.stop()
    let started = Date()
    let said = try runChatsh(["--socket", broker.socketPath, "say", "--wait", "2", "#b", "lost?"])
    let elapsed = Date().timeIntervalSince(started)
    #expect(said.status == 69)
    #expect(said.errors.contains("waiting up to 2 s for it (--wait)"))
    #expect(elapsed >= 1.5 && elapsed < 10)
    let now = try runChatsh(["--socket", broker.socketPath, "say", "--wait", "0", "#b", "lost?"])
    #expect(now.status == 69)
    #expect(!now.errors.contains("waiting"))
  }

  @Test(
    "say --wait that gives up lists on standard error what the broker did not take, and says the rest of its input was not read (real time)"
  )
  func sayGivingUpListsWhatWasNotSentRealTime() throws {
    let broker = try BrokerProcess().start()
    let say = try Running.chatsh(["--socket", broker.socketPath, "say", "--wait", "2", "#w"])
    say.write("w1\nw2\nw3\nw4\n")
    try waitUntil(timeout: 10, "w1-w4 in #w") { ((try? texts(broker, "#w")) ?? []).count == 4 }
    broker.kill()
    // Read by chatsh while it waits for the broker, never taken by one.
    say.write("w5\nw6\n")
    #expect(say.waitForExit(within: 30) == 69)
    let errors = say.err.current
    #expect(errors.contains("these 2 lines may not have been sent"), "\(errors)")
    #expect(errors.contains("the last line the broker took was “w4”"))
    #expect(errors.contains("\nw5\nw6\n"))
    #expect(errors.contains("standard input was not read to its end"))
    say.closeInput()
  }

  @Test("say started before the broker sends once it is up (real time)")
  func sayWaitsForBrokerToStartRealTime() throws {
    let broker = try BrokerProcess().start()
    try broker.stop()
    let say = try Running.chatsh([
      "--socket", broker.socketPath, "say", "--wait", "20", "#b", "first", "words",
    ])
    try waitUntil(timeout: 10, "say to wait for the broker") {
      say.err.current.contains("waiting up to 20 s")
    }
    try broker.restart()
    #expect(say.waitForExit(within: 30) == 0, "\(say.err.current)")
    #expect(try texts(broker, "#b") == ["first words"])
  }

  @Test("tail prints what was said while the broker restarted, once, in order (real time)")
  func tailAcrossRestartRealTime() throws {
    let broker = try BrokerProcess().start()
    _ = try broker.chatsh("say", "#ops", "before tail")
    let tail = try Running.chatsh(["--socket", broker.socketPath, "tail", "#ops"])
    try broker.waitForMember(NSUserName(), in: "#ops")
    #expect(try broker.chatsh("say", "#ops", "one").status == 0)
    try waitUntil(timeout: 10, "tail to print \"one\"") { tail.out.current.contains("one") }
    try broker.restart()
    // Said before tail is back (it waits a second first), then after.
    #expect(try broker.chatsh("say", "#ops", "two").status == 0)
    #expect(try broker.chatsh("say", "#ops", "three").status == 0)
    try waitUntil(timeout: 15, "tail to say it reconnected") {
      tail.err.current.contains("reconnected")
    }
    #expect(try broker.chatsh("say", "#ops", "four").status == 0)
    try waitUntil(timeout: 10, "tail to print \"four\"") { tail.out.current.contains("four") }
    let printed = tail.out.current.split(separator: "\n").map {
      String($0.split(separator: "\t").last ?? "")
    }
    #expect(printed == ["one", "two", "three", "four"])
  }
}
