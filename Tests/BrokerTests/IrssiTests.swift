import Foundation
import Glibc
import Posix
import Testing

/// Debian's irssi in a detached tmux session on a private tmux server, run
/// as a real Unix user: typed into with send-keys, read with capture-pane.
private final class IrssiTerminal {
  let server = "cb-irssi-\(getpid())-\(UUID().uuidString.prefix(8))"

  init(user: String, home: String) throws {
    let status = ChildProcess.run([
      "/usr/bin/tmux", "-L", server, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y",
      "50",
      "exec /usr/bin/setpriv --reuid=\(user) --regid=\(user) --clear-groups /usr/bin/env "
        + "TERM=screen HOME=\(home) TZ=UTC /usr/bin/irssi --home=\(home)/.irssi -n someone",
    ])
    #expect(status == 0)
  }

  deinit {
    ChildProcess.run(["/usr/bin/tmux", "-L", server, "-f", "/dev/null", "kill-server"])
  }

  /// Types a line and presses Enter.
  func enter(_ text: String) throws {
    ChildProcess.run([
      "/usr/bin/tmux", "-L", server, "-f", "/dev/null", "send-keys", "-t", "0", "-l", text,
    ])
    ChildProcess.run([
      "/usr/bin/tmux", "-L", server, "-f", "/dev/null", "send-keys", "-t", "0", "Enter",
    ])
  }

  /// The screen as text. Spawned without Foundation's Process, and polled
  /// slowly: many Process.run calls from one test would race the others'.
  var screen: String {
    let file = "/tmp/\(server).screen"
    defer { unlink(file) }
    ChildProcess.run([
      "/bin/sh", "-c",
      "/usr/bin/tmux -L \(server) -f /dev/null capture-pane -p -t 0 > \(file) 2>/dev/null",
    ])
    return (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
  }

  /// Waits (bounded) until the screen shows `text`.
  func waitFor(_ text: String, timeout: Double = 15) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if screen.contains(text) { return }
      usleep(100_000)
    }
    throw TestFailure(
      "timed out after \(timeout) s waiting for irssi to show \"\(text)\":\n\(screen)")
  }
}

@Suite("irssi on the IRC socket", .serialized)
struct IrssiTests {
  @Test(
    "irssi, as a real Unix user, sees history on join, talks with a line user both ways and gets a scheduled line (real time)",
    UnixUsers.required,
    .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/irssi"), "needs irssi"))
  func irssiTalksRealTime() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let home = broker.directory + "/home-cbtest1"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    let pw = getpwnam("cbtest1")!.pointee
    chown(home, pw.pw_uid, pw.pw_gid)

    let person = try broker.connect(as: "cbtest2")
    _ = try person.request("JOIN #lab")
    _ = try person.request("SAY #lab said before you came")

    let irssi = try IrssiTerminal(user: "cbtest1", home: home)
    try irssi.waitFor("Irssi v")
    try irssi.enter("/connect \(broker.ircSocketPath)")
    try irssi.waitFor("Welcome to chatbroker")
    try irssi.enter("/join #lab")
    try irssi.waitFor("cbtest1 [cbtest1@")
    try irssi.waitFor("< cbtest2> said before you came")
    _ = try person.expect("JOIN #lab cbtest1")

    _ = try person.request("SAY #lab hello irssi")
    try irssi.waitFor("< cbtest2> hello irssi")
    try irssi.enter("hello line protocol")
    #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest1 :hello line protocol"))

    try irssi.enter("/msg sched|bot at +2s #lab a scheduled hello")
    try irssi.waitFor("< cbtest1> a scheduled hello", timeout: 20)
    #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest1 :a scheduled hello"))
  }
}
