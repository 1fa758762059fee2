import Foundation
import LineProtocol
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// chatsh(1): the chat screen and `tail` end when their terminal goes
/// away, also when no SIGHUP reaches them (their session leader, such as
/// su(1), went first): they do not stay behind using the processor, and
/// the broker sees them leave.
@Suite(.serialized) struct HangUpTests {
  let broker: BrokerProcess

  init() throws {
    broker = try BrokerProcess().start()
  }

  /// Runs chatsh with `arguments` in a terminal of its own session
  /// (setsid(1)), so that the terminal's hang-up sends it no SIGHUP, as
  /// when it ran under `su -`; the pid it runs as.
  private func chatshInOwnSession(_ arguments: [String]) throws -> (Tmux, pid_t, String) {
    let pidFile = broker.path("chatsh-\(arguments.first ?? "").pid")
    let command =
      ([
        "env", "LANG=C.UTF-8", "TZ=UTC", "XDG_STATE_HOME=" + broker.path("xdg-state"),
        BuiltProducts.path("chatsh"), "--socket", broker.socketPath,
      ] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
    let terminal = try Tmux([
      "/usr/bin/setsid", "-w", "/bin/sh", "-c", "echo $$ > '\(pidFile)'; exec \(command)",
    ])
    var pid: pid_t?
    try waitUntil(timeout: 10, "chatsh's pid in \(pidFile)") {
      pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      return pid != nil
    }
    return (terminal, pid!, pidFile)
  }

  /// Closes the terminal (the tmux server and with it the terminal's
  /// master side), then waits up to 5 s for chatsh to end; the processor
  /// time it used after the hang-up. A chatsh still running is killed and
  /// the test fails, saying how much processor time it took.
  private func hangUp(_ terminal: Tmux, _ pid: pid_t) throws -> Double {
    let before = ProcessStat(pid: pid)?.cpuSeconds ?? 0
    var last = before
    terminal.close()
    do {
      try waitUntil(timeout: 5, interval: 0.02, "chatsh \(pid) to end after the hang-up") {
        if let stat = ProcessStat(pid: pid) { last = stat.cpuSeconds }
        return ProcessStat.hasEnded(pid)
      }
    } catch {
      let used = (ProcessStat(pid: pid)?.cpuSeconds ?? last) - before
      kill(pid, SIGKILL)
      throw TestFailure("\(error); it used \(used) s of processor time since the hang-up")
    }
    return last - before
  }

  private func isMember(_ room: String) throws -> Bool {
    let probe = try broker.connect()
    return try probe.request(.who(RoomName(room)!)).contains { $0.hasPrefix("MEMBER \(room) ") }
  }

  @Test("the chat screen ends when its terminal goes away, and leaves the room")
  func screenEndsOnHangUp() throws {
    let (terminal, pid, _) = try chatshInOwnSession(["#hangup"])
    try terminal.waitFor { $0.contains("#hangup") && $0.contains("[") }
    try waitUntil(timeout: 10, "chatsh in #hangup") { try isMember("#hangup") }
    let used = try hangUp(terminal, pid)
    #expect(used < 1, "it used \(used) s of processor time before it ended")
    try waitUntil(timeout: 5, "chatsh to leave #hangup") { try !isMember("#hangup") }
  }

  @Test("tail ends when its terminal goes away, and leaves the room")
  func tailEndsOnHangUp() throws {
    let (terminal, pid, _) = try chatshInOwnSession(["tail", "#hangup"])
    try waitUntil(timeout: 10, "tail in #hangup") { try isMember("#hangup") }
    let used = try hangUp(terminal, pid)
    #expect(used < 1, "it used \(used) s of processor time before it ended")
    try waitUntil(timeout: 5, "tail to leave #hangup") { try !isMember("#hangup") }
  }

  @Test("say reading the terminal sends what was typed and ends when the terminal goes away")
  func sayEndsOnHangUp() throws {
    let (terminal, pid, _) = try chatshInOwnSession(["say", "#hangup"])
    try terminal.enter("typed before the hang-up")
    try waitUntil(timeout: 10, "the typed line in #hangup") {
      try broker.chatsh("history", "#hangup").output.contains("typed before the hang-up")
    }
    let used = try hangUp(terminal, pid)
    #expect(used < 1, "it used \(used) s of processor time before it ended")
  }
}
