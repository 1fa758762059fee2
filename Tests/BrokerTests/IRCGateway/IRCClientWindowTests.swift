import Foundation
import Glibc
import TestSupport
import Testing

/// irssi and WeeChat, each a real Unix user in a terminal of its own, with a
/// line-protocol user beside them in #lab: what their windows show of
/// topics, actions and away (chatbroker(7), "IRC": `TOPIC`, CTCP ACTION,
/// `AWAY`), and that a reconnect shows what was missed once.
///
/// irssi (cbtest1) is on the IRC socket; WeeChat (cbtest2), which cannot
/// reach a Unix socket, on the loopback TCP listener; cbtest3 speaks the
/// line protocol. Both clients' flood queues are turned off, so each line
/// typed leaves at once.
private final class ClientsInLab {
  let broker: BrokerProcess
  let person: LineClient
  let irssi: Tmux
  let weechat: Tmux

  init() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    person = try broker.connect(as: "cbtest3")
    _ = try person.request("JOIN #lab")
    _ = try person.request("TOPIC #lab :deploy at 18:00")
    irssi = try broker.irssi(
      as: "cbtest1", settings: ["cmd_queue_speed 0", "cmds_max_at_once 1000"])
    try irssi.enter("/join #lab")
    try irssi.waitFor("Total of 2 nicks")
    let weechatHome = try broker.home(of: "cbtest2")
    weechat = try Tmux(
      BrokerProcess.asUser(
        "cbtest2", home: weechatHome,
        [
          "/usr/bin/weechat", "--dir", weechatHome + "/.weechat", "-r",
          "/set irc.server_default.anti_flood_prio_high 0; "
            + "/set irc.server_default.anti_flood_prio_low 0; "
            + "/server add chat 127.0.0.1/\(port) -notls -nicks=someone -autojoin=#lab; "
            + "/connect chat",
        ]), width: 160, height: 60)
    try weechat.waitFor("Channel #lab: 3 nicks", within: 20)
    try expectBoth("JOIN #lab")
  }

  /// Waits for the line-protocol user's `<prefix> cbtest1` and `<prefix>
  /// cbtest2` lines, in either order.
  func expectBoth(_ prefix: String) throws {
    var users: Set<String> = []
    for _ in 0..<2 {
      users.insert(String(try person.expect(prefix + " ", timeout: 20).dropFirst(prefix.count + 1)))
    }
    #expect(users == ["cbtest1", "cbtest2"])
  }
}

extension BrokerProcess {
  /// A home directory of the user's own under the broker's directory.
  func home(of user: String) throws -> String {
    let home = directory + "/home-" + user
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    let pw = getpwnam(user)!.pointee
    chown(home, pw.pw_uid, pw.pw_gid)
    return home
  }

  /// `command` run as `user`, in UTC, in a terminal tmux names `screen`.
  static func asUser(_ user: String, home: String, _ command: [String]) -> [String] {
    [
      "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/env",
      "TERM=screen", "HOME=\(home)", "TZ=UTC",
    ] + command
  }

  /// irssi as `user` in a terminal of its own (TestSupport's Tmux), with
  /// these `/set`s, connected to the IRC socket.
  func irssi(as user: String, settings: [String] = []) throws -> Tmux {
    let home = try home(of: user)
    let irssi = try Tmux(
      Self.asUser(user, home: home, ["/usr/bin/irssi", "--home=\(home)/.irssi", "-n", "someone"]),
      width: 160, height: 60)
    try irssi.waitFor("Irssi v")
    for setting in settings { try irssi.enter("/set " + setting) }
    try irssi.enter("/connect \(ircSocketPath)")
    try irssi.waitFor("Welcome to chatbroker")
    return irssi
  }
}

/// How many times `text` is on `screen`.
private func count(_ text: String, on screen: String) -> Int {
  screen.components(separatedBy: text).count - 1
}

@Suite("irssi and WeeChat windows: topics, actions, away, reconnect", .serialized)
struct IRCClientWindowTests {
  static let clientsInstalled =
    FileManager.default.fileExists(atPath: "/usr/bin/irssi")
    && FileManager.default.fileExists(atPath: "/usr/bin/weechat")

  @Test(
    "a topic set over the line protocol shows on join and when changed; /me is an action everywhere (real time)",
    UnixUsers.required, .enabled(if: clientsInstalled, "needs irssi and weechat-curses"))
  func topicsAndActionsRealTime() throws {
    let lab = try ClientsInLab()
    // On join, as each client words it.
    try lab.irssi.waitFor("-!- Topic for #lab: deploy at 18:00")
    try lab.irssi.waitFor("-!- Topic set by cbtest3 [cbtest3@")
    try lab.weechat.waitFor("Topic for #lab is \"deploy at 18:00\"")
    try lab.weechat.waitFor("Topic set by cbtest3 (cbtest3@")

    _ = try lab.person.request("TOPIC #lab :release on friday")
    try lab.irssi.waitFor("cbtest3 changed the topic of #lab to: release on friday")
    try lab.weechat.waitFor(
      "cbtest3 has changed topic for #lab from \"deploy at 18:00\" to \"release on friday\"")

    try lab.irssi.enter("/me waves from irssi")
    try lab.weechat.waitFor("* | cbtest1 waves from irssi")
    #expect(try lab.person.expect("MSG #lab ").hasSuffix(" cbtest1 ACTION :waves from irssi"))

    try lab.weechat.enter("/me nods from weechat")
    try lab.irssi.waitFor(" * cbtest2 nods from weechat")
    #expect(try lab.person.expect("MSG #lab ").hasSuffix(" cbtest2 ACTION :nods from weechat"))

    _ = try lab.person.request("ACTION #lab :bows from the line")
    try lab.irssi.waitFor(" * cbtest3 bows from the line")
    try lab.weechat.waitFor("* | cbtest3 bows from the line")
    for screen in [lab.irssi.screen(), lab.weechat.screen()] {
      #expect(!screen.contains("/me") && !screen.contains("ACTION"), "\(screen)")
    }
  }

  @Test(
    "/away shows to who writes (301) and in WHOIS; a reconnect shows what was missed once (real time)",
    UnixUsers.required, .enabled(if: clientsInstalled, "needs irssi and weechat-curses"))
  func awayAndReconnectRealTime() throws {
    let lab = try ClientsInLab()
    _ = try lab.person.request("SAY #lab before anyone left")
    try lab.irssi.waitFor("<@cbtest3> before anyone left")
    try lab.weechat.waitFor("@cbtest3 | before anyone left")

    // WeeChat is away: irssi, writing to it, is told, and WHOIS says so.
    try lab.weechat.enter("/away at lunch")
    try lab.weechat.waitFor("[cbtest2](at lunch)")
    try lab.irssi.enter("/query cbtest2")
    try lab.irssi.enter("are you there")
    try lab.irssi.waitFor("-!- cbtest2 is away: at lunch")
    try lab.irssi.enter("/whois cbtest2")
    try lab.irssi.waitFor("-!-  away     : at lunch")
    // irssi is away: WeeChat, writing to it, is told.
    try lab.irssi.enter("/away in a meeting")
    try lab.irssi.waitFor("[cbtest1 (zZzZ)]")
    try lab.weechat.enter("/query cbtest1")
    try lab.weechat.enter("hello irssi")
    try lab.weechat.waitFor("[cbtest1] is away: in a meeting")
    try lab.irssi.enter("/away")
    try lab.weechat.enter("/away")

    // Both leave; what is said meanwhile comes once when they are back,
    // and what they had seen does not come again.
    try lab.irssi.enter("/window 2")
    try lab.weechat.enter("/buffer #lab")
    try lab.irssi.enter("/disconnect")
    try lab.weechat.enter("/disconnect chat")
    try lab.expectBoth("PART #lab")
    _ = try lab.person.request("SAY #lab while you were out")
    try lab.irssi.enter("/connect \(lab.broker.ircSocketPath)")
    try lab.weechat.enter("/connect chat")
    try lab.expectBoth("JOIN #lab")
    try lab.irssi.waitFor("<@cbtest3> while you were out")
    try lab.weechat.waitFor("@cbtest3 | while you were out")
    _ = try lab.person.request("SAY #lab welcome back")
    try lab.irssi.waitFor("<@cbtest3> welcome back")
    try lab.weechat.waitFor("@cbtest3 | welcome back")
    for (client, screen) in [("irssi", lab.irssi.screen()), ("WeeChat", lab.weechat.screen())] {
      #expect(count("while you were out", on: screen) == 1, "\(client):\n\(screen)")
      #expect(count("before anyone left", on: screen) == 1, "\(client):\n\(screen)")
    }
  }
}
