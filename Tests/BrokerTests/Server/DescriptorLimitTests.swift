import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// The broker at its descriptor limit (RLIMIT_NOFILE), as a local user can
/// bring about by opening connections until none is left (chatbroker(7),
/// "Limits").
@Suite("The descriptor limit")
struct DescriptorLimitTests {
  @Test(
    "at the descriptor limit a newcomer gets ERR - LIMIT at once, the broker neither spins nor floods its log, and serves again once some close (real time)"
  )
  func refusesAtTheLimitRealTime() throws {
    let broker = try BrokerProcess().start()
    let pid = try #require(broker.process?.processIdentifier)
    let limited = try runCommand(["/usr/bin/prlimit", "--pid", "\(pid)", "--nofile=48:48"])
    try #require(limited.status == 0, "prlimit: \(limited.errors)")

    // Fill the table: connect until one is refused rather than greeted.
    var clients: [LineClient] = []
    var refusal: String?
    while refusal == nil && clients.count < 100 {
      let client = try LineClient(path: broker.socketPath, timeout: 5)
      let first = try client.readLine()
      if first?.hasPrefix("HELLO ") == true {
        clients.append(client)
      } else {
        refusal = first ?? "(closed without a line)"
      }
    }
    #expect(refusal?.hasPrefix("ERR - LIMIT :") == true, "got \(refusal ?? "nothing")")
    #expect(clients.count > 20)

    // While it stays full, more newcomers are refused promptly and cheaply.
    let cpuBefore = try cpuSeconds(of: pid)
    let logBefore = broker.log.utf8.count
    for _ in 0..<20 {
      let client = try LineClient(path: broker.socketPath, timeout: 2)
      #expect(try client.readLine()?.hasPrefix("ERR - LIMIT :") == true)
    }
    // A broker spinning on accept(2) would show it within this second.
    usleep(1_000_000)
    let cpu = try cpuSeconds(of: pid) - cpuBefore
    #expect(cpu < 0.25, "the broker used \(cpu) s of CPU in about a second")
    let logged = broker.log.utf8.count - logBefore
    #expect(logged < 1000, "the log grew by \(logged) bytes")
    #expect(broker.log.components(separatedBy: "limit=descriptors").count == 2, "said once")

    // Once some clients close, a newcomer is served.
    clients.removeLast(3)
    try waitUntil(timeout: 5, "a newcomer to be greeted") {
      let client = try LineClient(path: broker.socketPath, timeout: 2)
      return try client.readLine()?.hasPrefix("HELLO ") == true
    }
    try broker.stop()
  }

  /// User and system CPU time a process has used so far, from
  /// /proc/<pid>/stat.
  private func cpuSeconds(of pid: Int32) throws -> Double {
    let stat = String(
      decoding: try FileDescriptor.readAll(path: "/proc/\(pid)/stat"), as: UTF8.self)
    // Fields after the command name (which may hold spaces) in parentheses.
    guard let end = stat.lastIndex(of: ")") else { throw TestFailure("cannot read \(stat)") }
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    // utime and stime are fields 14 and 15 of the whole line.
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
      throw TestFailure("cannot read \(stat)")
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}
