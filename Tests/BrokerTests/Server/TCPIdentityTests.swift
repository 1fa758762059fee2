import Broker
import CShims
import Dispatch
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// Who a loopback TCP IRC client is (chatbroker(8), `--irc-listen`): the
/// owner of the client's end of the connection, as the kernel names it,
/// or nobody. Against the real binary, with real Unix users: a client that
/// closed before it was accepted is never taken for root, other users'
/// sockets do not hide anyone, IPv6 loopback works as IPv4 does, and a
/// connect flood does not starve the other users.
@Suite(
  "The owner of a loopback TCP connection", .serialized, UnixUsers.required,
  .enabled(
    if: FileManager.default.fileExists(atPath: "/usr/bin/python3"),
    "needs /usr/bin/python3 for the clients run as other users"))
struct TCPIdentityTests {
  @Test(
    "a client that sends and closes while the broker is stopped is never taken for root (or anyone else)"
  )
  func closedBeforeAcceptIsNotRoot() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("irc_tcp=127.0.0.1:\(port)")
    let observer = try broker.connect(as: "cbtest2")
    #expect(try observer.request("JOIN #owner") == ["OK JOIN #owner 1"])
    let process = try #require(broker.process)
    let logBefore = broker.log.utf8.count
    process.signal(SIGSTOP)
    var stopped = true
    defer { if stopped { process.signal(SIGCONT) } }
    // The whole session, queued in the kernel before the broker accepts,
    // and the client's socket closed.
    let forger = try runCommand(
      asUser(
        "cbtest1",
        [
          "/usr/bin/python3", "-c",
          """
          import socket
          s = socket.create_connection(("127.0.0.1", \(port)))
          s.sendall(b"NICK x\\r\\nUSER x 0 * :x\\r\\nJOIN #owner\\r\\nPRIVMSG #owner :forged\\r\\n")
          print(s.getsockname()[1])
          s.close()
          """,
        ]))
    #expect(forger.status == 0, "\(forger.errors)")
    // Once the broker's kernel has acknowledged the client's FIN, all that
    // is left of the client's socket is a timewait entry, which the kernel
    // lists with uid 0 and no inode: the case that made it root.
    let client = LoopbackTCP.Endpoint(
      family: AF_INET, address: [127, 0, 0, 1],
      port: try #require(UInt16(forger.output.trimmingCharacters(in: .whitespacesAndNewlines))))
    let server = LoopbackTCP.Endpoint(family: AF_INET, address: [127, 0, 0, 1], port: port)
    try waitUntil(timeout: 10, "the client's socket to be a timewait entry") {
      guard case .success(let socket) = TCPPeerOwner.lookup(source: client, destination: server)
      else { return false }
      return socket.inode == 0 && socket.uid == 0
    }
    process.signal(SIGCONT)
    stopped = false
    // Refused, or served as cbtest1 (and then closed): either is an answer.
    try waitUntil(timeout: 10, "the TCP connection refused, or served and closed") {
      let log = String(decoding: broker.log.utf8.dropFirst(logBefore), as: UTF8.self)
      return log.contains("\"connection refused\"")
        || log.split(separator: "\n").contains {
          $0.contains("\"connection closed\"") && !$0.contains("user=cbtest2")
        }
    }
    let lines = try observer.request("PING after")
    let messages = lines.filter { $0.hasPrefix("MSG #owner ") }
    #expect(messages.allSatisfy { $0.hasSuffix(" cbtest1 :forged") }, "\(messages)")
  }

  @Test(
    "another user's 1,000 listening sockets and 1,000 loopback connections hide nobody"
  )
  func manySocketsOfAnotherUser() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("irc_tcp=127.0.0.1:\(port)")
    let holder = try LineClient(
      running: asUser(
        "cbtest2",
        [
          "/usr/bin/python3", "-c",
          """
          import resource, socket, sys
          soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
          resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
          held = []
          for _ in range(1000):
              listener = socket.socket()
              listener.bind(("127.0.0.1", 0))
              listener.listen(1)
              client = socket.create_connection(listener.getsockname())
              server, _ = listener.accept()
              held += [listener, client, server]
          print("holding", len(held), flush=True)
          sys.stdin.read()
          """,
        ]))
    #expect(try holder.expect("holding ", timeout: 30) == "holding 3000")
    let irc = try LineClient(
      running: asUser("cbtest1", ["/usr/bin/nc", "-N", "127.0.0.1", "\(port)"]))
    try irc.send("NICK someone\r\nUSER someone 0 * :someone\r\n")
    #expect(try irc.expect(":").contains(" 001 cbtest1 :"), "\(broker.log)")
  }

  @Test(
    "a client on IPv6 loopback ([::1]) is named as on IPv4",
    .enabled(if: ipv6LoopbackPort() != nil, "needs IPv6 loopback (::1)"))
  func ipv6Loopback() throws {
    try UnixUsers.ensure()
    let port = try #require(ipv6LoopbackPort())
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "[::1]:\(port)"])
    try broker.waitForLog("irc_tcp=[::1]:\(port)")
    let irc = try LineClient(running: asUser("cbtest1", ["/usr/bin/nc", "-N", "::1", "\(port)"]))
    try irc.send("NICK root\r\nUSER root 0 * :root\r\n")
    #expect(try irc.expect(":").contains(" 001 cbtest1 :"), "\(broker.log)")
    try irc.send("JOIN #six\r\n")
    #expect(try irc.expect(":cbtest1!").hasSuffix(" JOIN #six\r"))
  }

  @Test("more clients waiting than one wake-up accepts are all served, in later wake-ups")
  func manyWaitingClients() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("irc_tcp=127.0.0.1:\(port)")
    let process = try #require(broker.process)
    process.signal(SIGSTOP)
    var stopped = true
    defer { if stopped { process.signal(SIGCONT) } }
    // 50 clients in the accept queue at once, three wake-ups' worth and then some.
    let clients = try (0..<50).map { _ in LineClient(fd: try LoopbackSocket.connect(port: port)) }
    for client in clients { try client.send("NICK n\r\nUSER n 0 * :n\r\n") }
    process.signal(SIGCONT)
    stopped = false
    for client in clients {
      #expect(try client.expect(":").contains(" 001 root :"))
    }
  }

  @Test("another user's PING p99 stays under 50 ms while one user floods TCP connects (real time)")
  func connectFloodRealTime() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("irc_tcp=127.0.0.1:\(port)")
    let pinger = try broker.connect(as: "cbtest2")
    let flood = ConnectFlood(port: port, threads: 2)
    defer { flood.stop() }
    try waitUntil(timeout: 10, "the flood to make 2,000 connections") { flood.connections > 2000 }
    try broker.waitForLog("\"connection")
    var seconds: [Double] = []
    let end = DispatchTime.now().uptimeNanoseconds + 3_000_000_000
    while seconds.count < 100 || DispatchTime.now().uptimeNanoseconds < end {
      let number = seconds.count
      let started = DispatchTime.now().uptimeNanoseconds
      #expect(try pinger.request("PING \(number)") == ["OK PING \(number)"])
      seconds.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
      if seconds.count >= 100_000 { break }
    }
    let made = flood.connections
    flood.stop()
    seconds.sort()
    let p99 = seconds[min(seconds.count - 1, seconds.count * 99 / 100)]
    let summary = String(
      format: "%d PINGs, p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d connections made",
      seconds.count, seconds[seconds.count / 2] * 1000, p99 * 1000, seconds.last! * 1000, made)
    print("PING during a TCP connect flood: \(summary)")
    #expect(p99 < 0.050, "\(summary)")
    #expect(broker.log.contains("\"connection refused\""), "the flood reached the broker")
    // And the listener still serves: the flood did not stop it.
    let irc = try LineClient(
      running: asUser("cbtest1", ["/usr/bin/nc", "-N", "127.0.0.1", "\(port)"]))
    try irc.send("NICK someone\r\nUSER someone 0 * :someone\r\n")
    #expect(try irc.expect(":", timeout: 20).contains(" 001 cbtest1 :"))
  }
}

/// `arguments` run as `user` (and that user's group, no others).
private func asUser(_ user: String, _ arguments: [String]) -> [String] {
  ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups"] + arguments
}

/// A TCP port on ::1 that was free a moment ago; nil when the host has no
/// IPv6 loopback.
private func ipv6LoopbackPort() -> UInt16? {
  let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var address = sockaddr_in6()
  address.sin6_family = sa_family_t(AF_INET6)
  address.sin6_addr = in6addr_loopback
  var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
  let bound = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
    }
  }
  return bound ? UInt16(bigEndian: address.sin6_port) : nil
}

/// Threads of this process that connect to a loopback TCP port and close
/// at once, as fast as they can, until ``stop()``. Each connection comes
/// from another 127.0.0.x source address in turn, so that the timewait
/// entries they leave spread over many addresses rather than use up the
/// ephemeral ports of one; the threads run below the broker and the user
/// who measures in the CPU's favour, so that on a small machine it is the
/// broker's work for the flood that counts, not the flood's own.
private final class ConnectFlood: @unchecked Sendable {
  private let lock = NSLock()
  private var made = 0
  private var stopping = false
  private let done = DispatchGroup()

  init(port: UInt16, threads: Int) {
    for thread in 0..<threads {
      done.enter()
      Thread.detachNewThread { [self] in
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        var round = 0
        while !isStopping {
          round += 1
          let source = UInt32(0x7F00_0002 + (thread * 120 + round % 120) % 250)
          if connectAndClose(port: port, source: source) {
            lock.withLock { made += 1 }
          }
        }
        done.leave()
      }
    }
  }

  var connections: Int { lock.withLock { made } }
  private var isStopping: Bool { lock.withLock { stopping } }

  func stop() {
    lock.withLock { stopping = true }
    _ = done.wait(timeout: .now() + 10)
  }

  private func connectAndClose(port: UInt16, source: UInt32) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var one: Int32 = 1
    setsockopt(fd, SOL_IP, IP_BIND_ADDRESS_NO_PORT, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = source.bigEndian
    var server = sockaddr_in()
    server.sin_family = sa_family_t(AF_INET)
    server.sin_port = port.bigEndian
    server.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
    }
    guard bound else { return false }
    return withUnsafePointer(to: &server) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
    }
  }
}

/// ``TCPPeerOwner`` and ``LoopbackTCP`` in this process, on real loopback
/// connections: the test process owns the client's end, so the kernel
/// must name getuid(), and the very socket (its inode).
@Suite("TCPPeerOwner and LoopbackTCP in-process")
struct TCPPeerOwnerTests {
  @Test("the owner of an IPv4 loopback connection is this process's uid, and the socket its own")
  func ownerOfIPv4Connection() throws {
    let pair = try LoopbackPair(family: AF_INET)
    #expect(TCPPeerOwner.uid(of: pair.accepted) == .success(getuid()))
    let client = try #require(LoopbackTCP.Endpoint(of: pair.client, peer: false))
    let server = try #require(LoopbackTCP.Endpoint(of: pair.client, peer: true))
    let found = try TCPPeerOwner.lookup(source: client, destination: server).get()
    var status = stat()
    #expect(fstat(pair.client, &status) == 0)
    #expect(found.inode == UInt32(truncatingIfNeeded: status.st_ino), "the client's own socket")
    #expect(found.state == 1, "ESTABLISHED")
    #expect(found.uid == getuid())
  }

  @Test(
    "the owner of an IPv6 loopback connection is this process's uid",
    .enabled(if: ipv6LoopbackPort() != nil, "needs IPv6 loopback (::1)"))
  func ownerOfIPv6Connection() throws {
    let pair = try LoopbackPair(family: AF_INET6)
    #expect(TCPPeerOwner.uid(of: pair.accepted) == .success(getuid()))
    let peer = try #require(LoopbackTCP.Endpoint(of: pair.accepted, peer: true))
    #expect(peer.description.hasPrefix("[::1]:"))
  }

  @Test("a client that closed before the accept has no owner: refused, never uid 0")
  func closedBeforeAccept() throws {
    let pair = try LoopbackPair(family: AF_INET, closeClientFirst: true)
    guard case .failure(let refusal) = TCPPeerOwner.uid(of: pair.accepted) else {
      Issue.record("a closed client was given an owner")
      return
    }
    #expect(refusal.description.contains("closed before it was accepted"), "\(refusal)")
  }

  @Test("a socket the kernel does not list is refused, with the reason")
  func notListed() {
    let nobody = LoopbackTCP.Endpoint(family: AF_INET, address: [127, 0, 0, 1], port: 1)
    let other = LoopbackTCP.Endpoint(family: AF_INET, address: [127, 0, 0, 1], port: 2)
    guard case .failure(let refusal) = TCPPeerOwner.lookup(source: nobody, destination: other)
    else {
      Issue.record("the kernel listed a socket from port 1 to port 2")
      return
    }
    #expect(refusal.description == "the kernel lists no TCP socket for the peer 127.0.0.1:1")
  }

  @Test(
    "--irc-listen takes IPv4 and IPv6 loopback addresses only",
    arguments: [
      ("127.0.0.1:6667", "127.0.0.1:6667"), ("127.1.2.3:1", "127.1.2.3:1"),
      ("[::1]:6667", "[::1]:6667"), ("[0:0:0:0:0:0:0:1]:7000", "[::1]:7000"),
      ("[::]:6667", nil), ("[::2]:6667", nil), ("::1:6667", nil),
      ("[::ffff:127.0.0.1]:6667", nil), ("[::1]:0", nil), ("[::1]", nil), ("127.0.0.1", nil),
      ("128.0.0.1:6667", nil), ("127.0.0.1:0", nil), ("[fe80::1]:6667", nil),
    ] as [(String, String?)])
  func parse(text: String, typedBack: String?) {
    #expect(LoopbackTCP.parse(text)?.description == typedBack)
  }

  @Test(
    "--irc-listen refuses an IPv6 address other than [::1], with status 64",
    arguments: ["[::]:6667", "[::2]:6667", "::1:6667", "[::ffff:127.0.0.1]:6667"])
  func refusesOtherIPv6(address: String) throws {
    let broker = try BrokerProcess()
    let result = try broker.runToExit([
      "--state-dir", broker.stateDirectory, "--irc-listen", address,
    ])
    #expect(result.status == 64)
    #expect(result.errors.contains("--irc-listen needs a loopback address"))
  }

  @Test(
    "a start that fails because its --irc-listen port is taken exits 75 and leaves no socket, journal or directory behind (chatbroker(8), EXIT STATUS)"
  )
  func failedStartLeavesNothing() throws {
    let taken = try LoopbackTCP.listen(
      on: LoopbackTCP.Endpoint(family: AF_INET, address: [127, 0, 0, 1], port: 0))
    defer { close(taken) }
    let port = try #require(LoopbackTCP.Endpoint(of: taken, peer: false)).port
    let broker = try BrokerProcess()
    let home = broker.path("fresh")
    let result = try broker.runToExit([
      "--socket", home + "/chatbroker.sock", "--state-dir", home + "/state",
      "--irc-listen", "127.0.0.1:\(port)",
    ])
    #expect(result.status == 75, "\(result.errors)")
    #expect(result.errors.contains("cannot listen on 127.0.0.1:\(port)"))
    #expect(!FileManager.default.fileExists(atPath: home), "left behind: \(home)")
    // A state directory that was there keeps what it held.
    try FileManager.default.createDirectory(
      atPath: home + "/state", withIntermediateDirectories: true)
    try "{}\n".write(toFile: home + "/state/keep", atomically: false, encoding: .utf8)
    let again = try broker.runToExit([
      "--socket", home + "/chatbroker.sock", "--state-dir", home + "/state",
      "--irc-listen", "127.0.0.1:\(port)",
    ])
    #expect(again.status == 75)
    #expect(FileManager.default.fileExists(atPath: home + "/state/keep"))
    #expect(!FileManager.default.fileExists(atPath: home + "/chatbroker.sock"))
    #expect(!FileManager.default.fileExists(atPath: home + "/irc.sock"))
  }

  /// The cost on the accept path, as one number: the mean of many lookups
  /// of one established connection (two getsockname/getpeername calls, a
  /// netlink socket, one request and its answer).
  @Test("one owner lookup takes well under a millisecond (real time)")
  func lookupCostRealTime() throws {
    let pair = try LoopbackPair(family: AF_INET)
    let count = 2000
    let started = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count {
      #expect(TCPPeerOwner.uid(of: pair.accepted) == .success(getuid()))
    }
    let each = Double(DispatchTime.now().uptimeNanoseconds - started) / Double(count) / 1000
    print(String(format: "one TCP owner lookup (sock_diag): %.1f us, mean of %d", each, count))
    #expect(each < 1000)
  }
}

/// A loopback TCP connection within this process: a listener on an
/// ephemeral port, a client connected to it, and the listener's accepted
/// end; `closeClientFirst` closes the client before the accept, as a
/// client that sent and left before the broker got to it.
private final class LoopbackPair {
  let listener: Int32
  /// -1 once closed.
  private(set) var client: Int32
  let accepted: Int32

  init(family: Int32, closeClientFirst: Bool = false) throws {
    let loopback =
      family == AF_INET
      ? LoopbackTCP.Endpoint(family: AF_INET, address: [127, 0, 0, 1], port: 0)
      : LoopbackTCP.Endpoint(
        family: AF_INET6, address: Array(repeating: 0, count: 15) + [1], port: 0)
    let listener = try LoopbackTCP.listen(on: loopback)
    let bound = try #require(LoopbackTCP.Endpoint(of: listener, peer: false))
    var client = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    #expect(client >= 0)
    var storage = sockaddr_storage()
    let length: Int
    if family == AF_INET {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = bound.port.bigEndian
      address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
      withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in.self) }
      length = MemoryLayout<sockaddr_in>.size
    } else {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = bound.port.bigEndian
      address.sin6_addr = in6addr_loopback
      withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
      length = MemoryLayout<sockaddr_in6>.size
    }
    let connected = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(client, $0, socklen_t(length))
      }
    }
    guard connected == 0 else { throw TestFailure("connect: \(String(cString: strerror(errno)))") }
    if closeClientFirst {
      close(client)
      client = -1
    }
    var fd: Int32 = -1
    try waitUntil(timeout: 5, "the connection in the accept queue") {
      fd = chat_accept_nonblocking(listener)
      return fd >= 0
    }
    self.listener = listener
    self.client = client
    accepted = fd
  }

  deinit {
    close(accepted)
    if client >= 0 { close(client) }
    close(listener)
  }
}
