import Foundation
import Glibc
import TestSupport
import Testing

/// Nobody but the broker's user can take over its socket or its files:
/// chatbroker(8), FILES. The directories are checked before anything is
/// created in them, and nothing in the state directory is opened through a
/// link. Refusals exit 78 (EX_CONFIG) with a message that says the fix.
@Suite("Private socket and state directories", UnixUsers.required)
struct PrivateFilesTests {
  @Test("alice's broker refuses the /tmp/chatbroker-UID that bob made for her, and says why")
  func foreignDefaultSocketDirectory() throws {
    try UnixUsers.ensure()
    let alice = "cbtest1"
    let bob = "cbtest2"
    // Without XDG_RUNTIME_DIR the default socket is /tmp/chatbroker-UID.
    let trap = "/tmp/chatbroker-\(try AsUser.uid(alice))"
    try? FileManager.default.removeItem(atPath: trap)
    #expect(mkdir(trap, 0o777) == 0)
    defer { try? FileManager.default.removeItem(atPath: trap) }
    try AsUser.give(trap, to: bob, mode: 0o777)
    let home = try makeShortTemporaryDirectory("cbf")
    defer { try? FileManager.default.removeItem(atPath: home) }
    try AsUser.give(home, to: alice, mode: 0o700)

    let result = try AsUser.run(
      alice, [BuiltProducts.path("chatbroker"), "--no-sync"], environment: ["HOME": home],
      timeout: 5)
    #expect(result.status == 78, "\(result.errors)")
    #expect(result.errors.contains("socket directory \(trap)"), "\(result.errors)")
    #expect(result.errors.contains("belongs to \(bob)"), "\(result.errors)")
    #expect(result.errors.contains("XDG_RUNTIME_DIR"), "\(result.errors)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: trap).isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty, "no state made")

    // Once it is gone, her broker makes its own: hers, and nobody may write to it.
    try FileManager.default.removeItem(atPath: trap)
    let broker = try UserBroker(
      user: alice, arguments: ["--no-sync"], socket: trap + "/chatbroker.sock",
      environment: ["HOME": home])
    var status = stat()
    #expect(lstat(trap, &status) == 0)
    #expect(status.st_uid == (try AsUser.uid(alice)))
    #expect(status.st_mode & 0o7777 == 0o711, "others may reach the socket, not list or change")
    _ = broker
  }

  @Test(
    "a socket directory it creates is 0711, or 0700 when the socket is for the owner only",
    arguments: [("0666", 0o711 as mode_t), ("0600", 0o700)])
  func createdSocketDirectory(socketMode: String, directoryMode: mode_t) throws {
    let broker = try BrokerProcess()
    let directory = broker.directory + "/run/chat"
    let socket = directory + "/sock"
    let running = try UserBroker(
      user: "root",
      arguments: [
        "--socket", socket, "--socket-mode", socketMode, "--state-dir", broker.stateDirectory,
        "--no-sync",
      ], socket: socket)
    #expect(try fileMode(directory) == directoryMode)
    #expect(try fileMode(broker.directory + "/run") == 0o755, "parents as before")
    _ = running
  }

  @Test(
    "a socket directory that others may write to is refused: exit 78, and nothing is bound",
    arguments: [0o777, 0o775, 0o1777] as [mode_t])
  func writableSocketDirectory(mode: mode_t) throws {
    let broker = try BrokerProcess()
    let directory = broker.directory + "/open"
    #expect(mkdir(directory, mode) == 0 && chmod(directory, mode) == 0)
    let result = try broker.runToExit(
      ["--socket", directory + "/sock", "--state-dir", broker.stateDirectory, "--no-sync"],
      timeout: 5)
    #expect(result.status == 78, "\(result.errors)")
    #expect(
      result.errors.contains("socket directory \(directory) is writable by others"),
      "\(result.errors)")
    #expect(result.errors.contains("chmod go-w \(directory)"), "\(result.errors)")
    #expect(access(directory + "/sock", F_OK) != 0)
    #expect(access(broker.stateDirectory, F_OK) != 0, "refused before the journal is touched")
  }

  @Test("a state directory of another user, or one that others may write to, is refused")
  func foreignStateDirectory() throws {
    try UnixUsers.ensure()
    // Root's broker, on a directory of cbtest2's.
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    try AsUser.give(broker.stateDirectory, to: "cbtest2", mode: 0o700)
    let foreign = try broker.runToExit(
      ["--socket", broker.socketPath, "--state-dir", broker.stateDirectory, "--no-sync"],
      timeout: 5)
    #expect(foreign.status == 78, "\(foreign.errors)")
    #expect(foreign.errors.contains("belongs to cbtest2"), "\(foreign.errors)")
    #expect(foreign.errors.contains("--state-dir"), "\(foreign.errors)")
    #expect(access(broker.journalPath, F_OK) != 0, "nothing was written there")

    // cbtest1's broker, on a world-writable directory of its own.
    let mine = try makeShortTemporaryDirectory("cbf")
    defer { try? FileManager.default.removeItem(atPath: mine) }
    try AsUser.give(mine, to: "cbtest1", mode: 0o755)
    #expect(mkdir(mine + "/state", 0o777) == 0)
    try AsUser.give(mine + "/state", to: "cbtest1", mode: 0o777)
    let open = try AsUser.run(
      "cbtest1",
      [
        BuiltProducts.path("chatbroker"), "--socket", mine + "/sock", "--state-dir",
        mine + "/state", "--no-sync",
      ], timeout: 5)
    #expect(open.status == 78, "\(open.errors)")
    #expect(open.errors.contains("state directory \(mine)/state is writable by others"))
    #expect(access(mine + "/state/journal.jsonl", F_OK) != 0)
  }

  @Test("a directory above the state directory that others may write to (not sticky) is refused")
  func writableParent() throws {
    let broker = try BrokerProcess()
    let parent = broker.directory + "/shared"
    #expect(mkdir(parent, 0o777) == 0 && chmod(parent, 0o777) == 0)
    let result = try broker.runToExit(
      ["--socket", broker.socketPath, "--state-dir", parent + "/state", "--no-sync"], timeout: 5)
    #expect(result.status == 78, "\(result.errors)")
    #expect(
      result.errors.contains("\(parent) (on the way to the state directory"), "\(result.errors)")
    #expect(result.errors.contains("not sticky"), "\(result.errors)")
  }

  @Test("a journal that is a symbolic link is refused, and the file it points to is untouched")
  func journalLink() throws {
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    let victim = broker.directory + "/victim"
    // No line feed: a torn record to the old code, which cut it off through the link.
    try "root owns this".write(toFile: victim, atomically: false, encoding: .utf8)
    #expect(symlink(victim, broker.journalPath) == 0)
    let result = try broker.runToExit(
      ["--socket", broker.socketPath, "--state-dir", broker.stateDirectory, "--no-sync"],
      timeout: 5)
    #expect(result.status == 78, "\(result.errors)")
    #expect(
      result.errors.contains("\(broker.journalPath) is a symbolic link"), "\(result.errors)")
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root owns this")
  }

  @Test("a lock file that is a symbolic link is refused, and nothing is created where it points")
  func lockLink() throws {
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    let target = broker.directory + "/created-by-root"
    let lock = broker.stateDirectory + "/chatbroker.lock"
    #expect(symlink(target, lock) == 0)
    let result = try broker.runToExit(
      ["--socket", broker.socketPath, "--state-dir", broker.stateDirectory, "--no-sync"],
      timeout: 5)
    #expect(result.status == 78, "\(result.errors)")
    #expect(result.errors.contains("\(lock) is a symbolic link"), "\(result.errors)")
    #expect(access(target, F_OK) != 0)
  }

  @Test("a journal and state directory that others may read are made 0600 and 0700, logged once")
  func readableJournal() throws {
    let broker = try BrokerProcess().start()
    #expect(try broker.connect().request("SAY #ops private matters").last?.hasPrefix("OK") == true)
    #expect(try broker.stop() == 0)
    #expect(chmod(broker.journalPath, 0o644) == 0 && chmod(broker.stateDirectory, 0o755) == 0)

    try broker.start()
    #expect(try fileMode(broker.journalPath) == 0o600)
    #expect(try fileMode(broker.stateDirectory) == 0o700)
    #expect(broker.log.contains("was readable by others (mode 0644), made 0600"), "\(broker.log)")
    #expect(broker.log.contains("was readable by others (mode 0755), made 0700"), "\(broker.log)")
    #expect(try broker.connect().dataLines("HISTORY #ops").count == 1)
    #expect(try broker.stop() == 0)

    try broker.start()
    #expect(broker.log.components(separatedBy: "made 0600").count == 2, "once, not per start")
  }

  @Test(
    "a socket passed by systemd is served wherever it is: its directory is systemd's",
    .enabled(if: SystemdTests.socketActivate != nil))
  func passedSocketDirectoryIsNotChecked() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    #expect(chmod(run.directory, 0o777) == 0)
    let state = try makeShortTemporaryDirectory("cbf")
    defer { try? FileManager.default.removeItem(atPath: state) }
    let activator = try run.launchClean(
      SystemdTests.socketActivate!,
      ["-l", run.socketPath, "--fdname=chatbroker", BuiltProducts.path("chatbroker")]
        + ["--state-dir", state + "/state", "--no-sync"])
    defer { run.kill(activator) }
    // The first connection starts the broker; retried until systemd-socket-
    // activate listens (its socket file appears just before).
    var client: LineClient?
    try waitUntil(timeout: 10, "systemd-socket-activate to listen on \(run.socketPath)") {
      if !activator.isRunning { throw TestFailure("exited early: \(run.log)") }
      client = try? LineClient(path: run.socketPath, timeout: 30)
      return client != nil
    }
    #expect(try client?.expect("HELLO ").hasPrefix("HELLO ") == true, "\(run.log)")
  }
}
