import Foundation
import TestSupport
import Testing

/// The drop-in that lets the installed service serve IRC over TCP (WeeChat)
/// and the browser door: shipped as systemd/tcp-doors.conf and shown in
/// chatbroker(8), EXAMPLES.
extension SystemdTests {
  @Test(
    "systemd/tcp-doors.conf: systemd-analyze verify is clean with it, and chatbroker(8) shows it as shipped",
    .enabled(if: analyze != nil))
  func tcpDoorsDropIn() throws {
    let shipped = try String(
      contentsOfFile: Repository.path("systemd/tcp-doors.conf"), encoding: .utf8)
    let directives = shipped.split(separator: "\n").filter { !$0.hasPrefix("#") }
    #expect(directives.contains("PrivateNetwork=no"))
    #expect(directives.contains("IPAddressAllow=localhost"))
    #expect(directives.contains("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK"))
    #expect(
      directives.contains { $0.hasPrefix("ExecStart=/usr/local/bin/chatbroker --irc-listen ") })

    // The page's literal block is the file without its comments.
    let page = try String(contentsOfFile: Repository.path("man/chatbroker.8"), encoding: .utf8)
    let shown = page.components(separatedBy: "\nIt holds:\n.Bd -literal -offset indent\n").last?
      .components(separatedBy: "\n.Ed\n").first?.split(separator: "\n")
    #expect(shown == directives, "chatbroker(8), EXAMPLES, shows the drop-in as shipped")

    let run = try BrokerProcess(prefix: "cbsd")
    let units = run.path("units")
    try FileManager.default.createDirectory(
      atPath: units + "/chatbroker.service.d", withIntermediateDirectories: true)
    // verify checks that ExecStart= exists: point it at the built binary.
    let built = { (text: String) in
      text.replacingOccurrences(
        of: "/usr/local/bin/chatbroker", with: BuiltProducts.path("chatbroker"))
    }
    let service = try String(
      contentsOfFile: Repository.path("systemd/chatbroker.service"), encoding: .utf8)
    try built(service).write(
      toFile: units + "/chatbroker.service", atomically: true, encoding: .utf8)
    try built(shipped).write(
      toFile: units + "/chatbroker.service.d/tcp-doors.conf", atomically: true, encoding: .utf8)
    for socket in ["chatbroker.socket", "chatbroker-irc.socket", "chatbroker-web.socket"] {
      try FileManager.default.copyItem(
        atPath: Repository.path("systemd/" + socket), toPath: units + "/" + socket)
    }
    let result = try Tool.run(
      Self.analyze!,
      [
        "verify", "--man=no", units + "/chatbroker.socket", units + "/chatbroker-irc.socket",
        units + "/chatbroker-web.socket", units + "/chatbroker.service",
      ])
    #expect(result.status == 0)
    #expect(result.output == "", "systemd-analyze verify said: \(result.output)")
  }
}
