import Broker
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// The start-up sequence, signals and shutdown of the daemon. Exit codes are
/// from sysexits(3) (``ExitCode``).
final class Daemon: @unchecked Sendable {
  let options: Options
  let log: Logger
  let queue = DispatchQueue(label: "chatbroker.engine")
  private var signalSources: [DispatchSourceSignal] = []
  private var boundSocketPath: String?
  private var boundIRCSocketPath: String?
  /// The browser door's sockets systemd passed, with their addresses.
  private var passedWebSockets: [(fd: Int32, endpoint: LoopbackTCP.Endpoint)] = []
  /// Directories this start-up created (the state directory, the socket's),
  /// newest last: a start-up that fails removes them again when they hold
  /// nothing but what it put there (``fail(_:status:)``).
  private var createdDirectories: [String] = []
  private var watchdog: DispatchSourceTimer?
  /// Set on the queue by the first SIGTERM or SIGINT.
  private var stopping = false
  /// Set on the queue once the broker serves; until then a signal simply
  /// ends the start-up.
  private var running: (server: Server, journal: FileJournal)?

  init(options: Options) {
    self.options = options
    log = Logger.standardError(minimumLevel: options.verbose ? .debug : .info)
  }

  func run() -> Never {
    signal(SIGPIPE, SIG_IGN)
    handleSignals()
    let environment = ProcessInfo.processInfo.environment
    let stateDirectory = Paths.stateDirectory(
      option: options.stateDirectory, environment: environment)
    // The broker's zone (chatbroker(8), ENVIRONMENT, TZ), said once.
    let zone = LocalZone(environment: environment)
    log.info(
      "starting",
      [
        "version": chatbrokerVersion, "pid": "\(getpid())", "state_dir": stateDirectory,
        "sync": options.sync ? "on" : "off", "time_zone": zone.name,
      ])
    if let problem = zone.problem {
      log.warning("the time zone in TZ is not used", ["reason": problem, "time_zone": zone.name])
    }
    // Sockets passed by systemd are checked before the state is touched, so
    // a wrong chatbroker.socket fails at once, without locking or replaying.
    let passedAll = passedSockets()
    let passed = passedAll.filter { $0.name != Systemd.webName }
    passedWebSockets = passedAll.filter { $0.name == Systemd.webName }.compactMap { socket in
      LoopbackTCP.Endpoint(of: socket.fd, peer: false).map { (socket.fd, $0) }
    }
    // Our own socket's directory too: refused before the journal is locked.
    let socketPath = passed.isEmpty ? prepareSocketDirectory(environment) : nil

    let clock = SystemClock(zone: zone)
    let journal = openJournal(stateDirectory)
    // The journal's one writer, and the engine's sink (chatbroker(8), JOURNAL).
    let committer = JournalCommitter(
      journal: journal, syncs: options.sync, purgeInterval: options.purgeInterval, log: log)
    let users = SystemUsers()
    let engine = Engine(
      limits: options.limits, clock: clock, users: users, journal: committer,
      groups: SystemGroups(), log: log)
    federate(engine)
    let steps = StepWatch(log: log)
    replay(journal, into: engine, now: clock.now, steps: steps)

    let sockets = socketPath.map { [bindSocket($0)] + bindIRCSocket() } ?? passed
    let ircTCP = listenIRCOverTCP()
    let webDoor = listenWebDoor()
    var serverOptions = Server.Options()
    serverOptions.ircBacklog = options.ircBacklog
    if let name = options.serverName { serverOptions.serverName = name }
    serverOptions.limits = options.limits
    let server: Server
    do {
      server = try Server(
        queue: queue, engine: engine, committer: committer, users: users,
        options: serverOptions, log: log, steps: steps)
    } catch {
      fail(error.description, status: ExitCode.systemError)
    }
    let status = StatusReporter(queue: queue, enabled: environment["NOTIFY_SOCKET"] != nil) {
      Self.statusText(
        connections: server.connectionCount, rooms: engine.roomCount,
        pending: engine.pendingCount) + (server.federationState.map { ", link \($0)" } ?? "")
        + (steps.statusText.map { ", " + $0 } ?? "")
    }
    startWatchdog()
    queue.sync {
      // On the queue: the poll's thread runs passes from the server's
      // start, and each pass reads these (ThreadSanitizer).
      server.onStatusChange = { status.changed() }
      // Nothing unsaved may ever be acknowledged: a journal that cannot be
      // cut back after a failed sync stops the broker (chatbroker(8), EXIT
      // STATUS). The server has logged why.
      server.onJournalFailure = { _ in exit(ExitCode.ioError.rawValue) }
      running = (server, journal)
      do throws(SystemError) {
        for socket in sockets {
          // The IRC socket: bound here, or passed with FileDescriptorName=irc.
          let isIRC = socket.name == "irc" || socket.name == boundIRCSocketPath
          try server.listen(on: socket.fd, wire: isIRC ? .irc : .line)
          log.info("listening", ["socket": socket.name, "fd": "\(socket.fd)"])
        }
        if let tcp = ircTCP {
          try server.listen(on: tcp, wire: .ircOverTCP)
          log.info("listening", ["irc_tcp": "\(options.ircListenText)", "fd": "\(tcp)"])
        }
        // The browser door: bound here, or passed with FileDescriptorName=web.
        for (fd, endpoint) in webDoor {
          try server.listen(on: fd, wire: .web)
          log.info("listening", ["web": endpoint.description, "fd": "\(fd)"])
          if engine.webDoorPort == nil { engine.webDoorPort = endpoint.port }
        }
      } catch {
        fail(error.description, status: ExitCode.systemError)
      }
      engine.finishReplay()
      startFederation(server, engine)
      // A journal that grew over the last run is compacted now, not once
      // it has doubled again (see FileJournal.shouldCompact).
      server.compactIfDue()
      status.changed()
      // Still on the queue: no connection can be accepted, let alone
      // answered, before systemd has been told that the broker is ready.
      Systemd.notify("READY=1")
    }
    dispatchMain()
  }

  /// The `STATUS=` text `systemctl status chatbroker` shows.
  static func statusText(connections: Int, rooms: Int, pending: Int) -> String {
    func count(_ number: Int, _ noun: String) -> String {
      "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
    return
      "\(count(connections, "connection")), \(count(rooms, "room")), \(count(pending, "pending message"))"
  }

  /// The state directory, checked (see ``PrivateDirectory``) and locked.
  private func openJournal(_ directory: String) -> FileJournal {
    prepare(directory, role: .state, mode: 0o700)
    do {
      return try FileJournal(directory: directory, compactionFloor: options.compactMinSize)
    } catch {
      switch error {
      case .locked: fail(error.description, status: ExitCode.temporaryFailure)
      case .unsafe: fail(error.description, status: ExitCode.configuration)
      default: fail(error.description, status: ExitCode.cannotCreate)
      }
    }
  }

  /// Creates the directory if missing and refuses to start (78) when
  /// another user could change what is in it; logs a mode it tightened.
  private func prepare(_ directory: String, role: PrivateDirectory.Role, mode: mode_t) {
    if access(directory, F_OK) != 0 { createdDirectories.append(directory) }
    do {
      for notice in try PrivateDirectory.prepare(
        directory, role: role, mode: mode, makePrivate: role == .state)
      {
        log.notice(notice)
      }
    } catch {
      switch error {
      case .unsafe(let reason): fail("refusing to start: \(reason)", status: ExitCode.configuration)
      case .system: fail(error.description, status: ExitCode.cannotCreate)
      }
    }
  }

  private func replay(
    _ journal: FileJournal, into engine: Engine, now: Timestamp, steps: StepWatch
  ) {
    let started = DispatchTime.now()
    let report: JournalLoadReport
    do {
      // A step is one record: reading it from the journal (since the last
      // one was applied) and applying it; the first, applying it only
      // (mapping and scanning the file before it is no record's).
      var step: UInt64?
      var number = 0
      report = try journal.load(repair: options.repair, now: now) { record in
        let started = step ?? steps.begin()
        engine.replay(record)
        number += 1
        steps.end(started, .replay, fields: [(key: "record", value: "\(number)")])
        step = steps.begin()
      }
    } catch {
      if case .corrupt = error { fail(error.description, status: ExitCode.dataError) }
      if case .unsafe = error {
        fail("refusing to start: \(error)", status: ExitCode.configuration)
      }
      fail(error.description, status: ExitCode.ioError)
    }
    for notice in journal.notices { log.notice(notice) }
    if report.tornBytesDropped > 0 {
      log.warning(
        "journal ended in an incomplete record, cut off",
        ["path": journal.path, "bytes_dropped": "\(report.tornBytesDropped)"])
    }
    if let aside = report.damagedPath {
      log.warning(
        "journal repaired: damaged lines set aside",
        ["path": journal.path, "lines": "\(report.damagedLines)", "aside": aside])
    }
    let milliseconds =
      Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6
    log.info(
      "journal replayed",
      [
        "path": journal.path, "records": "\(report.records)", "bytes": "\(report.bytes)",
        "rooms": "\(engine.roomCount)", "pending": "\(engine.pendingCount)",
        "ms": String(format: "%.1f", milliseconds),
      ])
  }

  /// The listening sockets systemd passed (socket activation), checked;
  /// empty when chatbroker was started without them. A passed socket that is
  /// not a listening AF_UNIX stream socket is a configuration error (78).
  private func passedSockets() -> [(fd: Int32, name: String)] {
    do {
      let passed = try Systemd.passedSockets()
      if !passed.isEmpty, options.socketPath != nil {
        log.notice("--socket ignored: systemd passed the sockets to listen on")
      }
      return passed
    } catch {
      fail(error.description, status: ExitCode.configuration)
    }
  }

  /// The path of our own socket, when systemd passed none, after making
  /// sure its directory is ours and nobody else may write to it (see
  /// ``PrivateDirectory``): created 0700, or 0711 when the socket's mode
  /// lets others connect (they may reach the socket by name, not list or
  /// change the directory).
  private func prepareSocketDirectory(_ environment: [String: String]) -> String {
    let path = Paths.socket(option: options.socketPath, environment: environment)
    prepareDirectory(ofSocket: path)
    return path
  }

  private func prepareDirectory(ofSocket path: String) {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    prepare(directory, role: .socket, mode: options.socketMode & 0o077 == 0 ? 0o700 : 0o711)
  }

  /// Binds our own socket at `path` (see ``prepareSocketDirectory(_:)``).
  private func bindSocket(_ path: String) -> (fd: Int32, name: String) {
    do {
      let fd = try UnixSocket.bind(path: path, mode: options.socketMode)
      boundSocketPath = path
      return (fd, path)
    } catch {
      let status = error.errno == EADDRINUSE ? ExitCode.temporaryFailure : ExitCode.cannotCreate
      fail("cannot listen on \(path): \(error)", status: status)
    }
  }

  /// The IRC socket beside the main one (or at `--irc-socket`), unless
  /// `--irc-socket ""` turned it off.
  private func bindIRCSocket() -> [(fd: Int32, name: String)] {
    guard let main = boundSocketPath, options.ircSocketPath != "" else { return [] }
    let path =
      options.ircSocketPath
      ?? (URL(fileURLWithPath: main).deletingLastPathComponent().path + "/irc.sock")
    // Beside the main socket its directory is checked already; elsewhere
    // it must pass the same checks.
    if options.ircSocketPath != nil { prepareDirectory(ofSocket: path) }
    do {
      let fd = try UnixSocket.bind(path: path, mode: options.socketMode)
      boundIRCSocketPath = path
      return [(fd, path)]
    } catch {
      let status = error.errno == EADDRINUSE ? ExitCode.temporaryFailure : ExitCode.cannotCreate
      fail("cannot listen on \(path): \(error)", status: status)
    }
  }

  /// `--irc-listen`: the loopback TCP listener for IRC.
  private func listenIRCOverTCP() -> Int32? {
    guard let listen = options.ircListen else { return nil }
    do {
      return try LoopbackTCP.listen(on: listen)
    } catch {
      let status = error.errno == EADDRINUSE ? ExitCode.temporaryFailure : ExitCode.cannotCreate
      fail("cannot listen on \(options.ircListenText): \(error)", status: status)
    }
  }

  /// `--web-listen`: the browser door's loopback TCP listeners, and those
  /// systemd passed as "web" (chatbroker-web.socket), with their addresses.
  private func listenWebDoor() -> [(fd: Int32, endpoint: LoopbackTCP.Endpoint)] {
    var listeners = passedWebSockets
    for endpoint in options.webListen {
      do {
        listeners.append((try LoopbackTCP.listen(on: endpoint), endpoint))
      } catch {
        let status = error.errno == EADDRINUSE ? ExitCode.temporaryFailure : ExitCode.cannotCreate
        fail("cannot listen on \(endpoint): \(error)", status: status)
      }
    }
    return listeners
  }

  /// SIGTERM and SIGINT: STOPPING=1, BYE to every client, the last group
  /// commit, exit 0, all within a second. Clients get up to 800 ms to read
  /// their BYE; the rest is left for the final sync and the exit. Installed
  /// first thing, before the socket can accept anyone: a signal that comes
  /// while the journal is replayed ends the start-up cleanly (nothing has
  /// been written yet), and one that comes later shuts down as above.
  ///
  /// On Linux libdispatch reads signals through a signalfd, which sees only
  /// signals that every thread blocks: main.swift blocks them before any
  /// thread exists (an unblocked thread would have them discarded as
  /// ignored, or delivered the old way).
  private func handleSignals() {
    for number in [SIGTERM, SIGINT] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler { [self] in
        // A second signal while the first shutdown drains changes nothing:
        // that one already ends within a second.
        guard !stopping else { return }
        stopping = true
        log.info("shutting down", ["signal": number == SIGTERM ? "TERM" : "INT"])
        Systemd.notify("STOPPING=1\nSTATUS=stopping: saying BYE to every client")
        guard let server = running?.server else {
          log.info("stopped during start-up")
          exit(0)
        }
        server.shutdown(within: .milliseconds(800)) { [self] in
          if let path = boundSocketPath { unlink(path) }
          if let path = boundIRCSocketPath { unlink(path) }
          // Records written while shutting down (deliveries, or a group
          // commit still in flight) are on stable storage before exit 0.
          if let reason = server.syncJournalAtShutdown() {
            log.error(
              "journal sync failed at shutdown",
              ["path": running?.journal.path ?? "", "reason": reason])
            exit(ExitCode.ioError.rawValue)
          }
          log.log(
            .info, "stopped",
            fields: [(key: "syncs", value: "\(server.syncCount)")] + server.steps.summaryFields)
          exit(0)
        }
      }
      source.resume()
      signalSources.append(source)
    }
  }

  /// Pings systemd's watchdog from the engine's queue, so a stuck engine
  /// stops pinging and gets restarted.
  private func startWatchdog() {
    guard let interval = Systemd.watchdogInterval() else { return }
    let timer = DispatchSource.makeTimerSource(queue: queue)
    let half: DispatchTimeInterval
    if case .microseconds(let value) = interval {
      half = .microseconds(value / 2)
    } else {
      half = .seconds(1)
    }
    timer.schedule(deadline: .now(), repeating: half)
    timer.setEventHandler { Systemd.notify("WATCHDOG=1") }
    timer.resume()
    watchdog = timer
  }

  /// Ends a start-up that cannot go on. Under systemd the line is logged at
  /// priority err (`<3>`), and the message becomes the unit's status text,
  /// so `systemctl status chatbroker` shows why it failed.
  ///
  /// What this start-up made goes again, so that a failed start leaves
  /// nothing behind: the sockets it bound, and a directory it created, with
  /// the journal it began (its first line only) and the lock file
  /// (rmdir(2) leaves a directory that holds anything else).
  func fail(_ message: String, status: ExitCode) -> Never {
    let prefix = Logger.stderrIsJournal() ? "<3>" : ""
    FileHandle.standardError.write(Data("\(prefix)chatbroker: \(message)\n".utf8))
    if let path = boundSocketPath { unlink(path) }
    if let path = boundIRCSocketPath { unlink(path) }
    for directory in createdDirectories.reversed() {
      // A journal this start-up began holds its first line and no more.
      let journal = directory + "/journal.jsonl"
      if let data = FileManager.default.contents(atPath: journal), data.count < 4096,
        data.filter({ $0 == UInt8(ascii: "\n") }).count <= 1,
        data.isEmpty || data.starts(with: Array(#"{"type":"journal""#.utf8))
      {
        unlink(journal)
        unlink(directory + "/chatbroker.lock")
      }
      rmdir(directory)
    }
    Systemd.notify("STATUS=cannot start: \(message)")
    // Let systemd read the status before it sees the process exit.
    Systemd.barrier(timeout: .milliseconds(500))
    exit(status.rawValue)
  }
}
