import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real chatsh against the real chatbroker.
@Suite struct ScriptModeTests {
  @Test(
    "say prints nothing on success; history prints time, room, sender and text separated by tabs")
  func sayThenHistory() throws {
    let broker = try BrokerProcess().start()
    let said = try broker.chatsh("say", "#ops", "deploy", "starts")
    #expect(said.status == 0 && said.output.isEmpty && said.errors.isEmpty)
    let history = try broker.chatsh("history", "#ops")
    let fields = history.output.split(separator: "\n").first?.split(separator: "\t") ?? []
    #expect(history.status == 0)
    #expect(fields.count == 4)
    #expect(fields.dropFirst().map(String.init) == ["#ops", NSUserName(), "deploy starts"])
    #expect(fields.first?.hasSuffix("Z") == true)
  }

  @Test(
    "say --notice: an IRC client gets each line as a NOTICE, a line client as MSG; not with --at"
  )
  func sayNotice() throws {
    let broker = try BrokerProcess().start()
    let me = NSUserName()
    let host = ProcessInfo.processInfo.hostName
    let irc = try LineClient(path: broker.ircSocketPath)
    try irc.send("NICK \(me)\r\nUSER \(me) 0 * :\(me)\r\nJOIN #builds\r\n")
    try irc.expect(":\(host) 366 \(me) #builds ")
    let reader = try broker.connect()
    #expect(try reader.request("JOIN #builds").last?.hasPrefix("OK JOIN #builds") == true)
    let said = try broker.chatsh(
      "say", "--notice", "#builds", "deploy 42 finished")
    #expect(said.status == 0 && said.output.isEmpty && said.errors.isEmpty, "\(said.errors)")
    #expect(
      try irc.expect(":\(me)!") == ":\(me)!\(me)@\(host) NOTICE #builds :deploy 42 finished\r")
    #expect(try reader.expect("MSG #builds ").hasSuffix(" \(me) :deploy 42 finished"))
    let piped = try broker.chatsh("say", "--notice", "#builds", input: "one\ntwo\n")
    #expect(piped.status == 0, "\(piped.errors)")
    #expect(try irc.expect(":\(me)!").hasSuffix(" NOTICE #builds :one\r"))
    #expect(try irc.expect(":\(me)!").hasSuffix(" NOTICE #builds :two\r"))
    let scheduled = try broker.chatsh("say", "--notice", "--at", "18:00", "#builds", "x")
    #expect(scheduled.status == 64 && scheduled.errors.contains("--notice or --at/--every"))
  }

  @Test("3,000 lines piped into say arrive, one message each, in order; empty lines are skipped")
  func manyLinesFromStandardInput() throws {
    let broker = try BrokerProcess().start()
    let lines = (1...3000).map { "line \($0)" }
    let said = try broker.chatsh("say", "#builds", input: lines.joined(separator: "\n") + "\n\n")
    #expect(said.status == 0, "\(said.errors)")
    let history = try broker.chatsh("history", "-n", "1000", "--json", "#builds")
    let texts = try history.output.split(separator: "\n").map { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
      return object?["text"] ?? ""
    }
    #expect(texts == Array(lines.suffix(1000)))
  }

  @Test("a last line without a newline is sent; colours and CR LF are cleaned off")
  func finalLineWithoutNewlineAndEscapes() throws {
    let broker = try BrokerProcess().start()
    let said = try broker.chatsh("say", "#b", input: "\u{1B}[31mred\u{1B}[0m\r\nlast")
    #expect(said.status == 0, "\(said.errors)")
    let history = try broker.chatsh("history", "#b")
    #expect(
      history.output.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" } == [
        "red", "last",
      ])
  }

  @Test("say --at prints the id and due time; scheduled lists it; cancel removes it")
  func scheduleListAndCancel() throws {
    let broker = try BrokerProcess().start()
    let scheduled = try broker.chatsh("say", "--at", "+1h", "#ops", "later", "on")
    #expect(scheduled.status == 0, "\(scheduled.errors)")
    let parts = scheduled.output.trimmingCharacters(in: .newlines).split(separator: "\t")
    #expect(parts.count == 2)
    let id = String(parts.first ?? "")
    let listed = try broker.chatsh("scheduled", "--json")
    let object =
      try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: String]
    #expect(object?["id"] == id)
    #expect(object?["text"] == "later on")
    #expect(object?["due"] == String(parts.last ?? ""))
    #expect(try broker.chatsh("cancel", id).status == 0)
    let again = try broker.chatsh("cancel", id)
    #expect(again.status == 1)
    #expect(again.errors.contains("NOSUCHMSG"))
    #expect(try broker.chatsh("scheduled").output.isEmpty)
  }

  @Test("say --at 12:00 means noon in the user's TZ, not the broker's")
  func localClockTimeIsTheUsersZone() throws {
    let broker = try BrokerProcess().start()
    // Whatever the broker's zone, 12:00 in UTC+14 is the next xx:00 at 22:00Z.
    let run = try broker.chatsh(
      "say", "--at", "12:00", "#ops", "noon", environment: ["TZ": "Pacific/Kiritimati"])
    #expect(run.status == 0, "\(run.errors)")
    #expect(run.output.contains("T22:00:00.000Z"))
  }

  @Test("rooms lists rooms with member counts, sorted, also as JSON; who lists members")
  func roomsAndWho() throws {
    let broker = try BrokerProcess().start()
    _ = try broker.chatsh("say", "#zeta", "x")
    _ = try broker.chatsh("say", "#alpha", "x")
    let rooms = try broker.chatsh("rooms")
    #expect(rooms.output == "#alpha\t0\n#zeta\t0\n")
    let json = try broker.chatsh("rooms", "--json")
    #expect(json.output.hasPrefix("{\"room\":\"#alpha\",\"members\":0}"))
    let who = try broker.chatsh("who", "#alpha")
    #expect(who.status == 0 && who.output.isEmpty)
  }

  @Test("tail -n 1 --json prints the last line, then follows the room as JSON Lines")
  func tailFollowsAndPrintsJSON() throws {
    let broker = try BrokerProcess().start()
    _ = try broker.chatsh("say", "#ops", "before")
    let tail = try Running.chatsh(
      ["--socket", broker.socketPath, "tail", "-n", "1", "--json", "#ops"])
    let output = tail.out
    try waitUntil(timeout: 10, "tail to print \"before\"") { output.current.contains("before") }
    // Once tail has joined, the room has a member.
    try waitUntil(timeout: 10, "tail to join #ops") {
      (try? broker.chatsh("who", "#ops").output.isEmpty == false) ?? false
    }
    _ = try broker.chatsh("say", "#ops", "after")
    try waitUntil(timeout: 10, "tail to print \"after\"") { output.current.contains("after") }
    let texts = try output.current.split(separator: "\n").map {
      (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String])?["text"]
    }
    #expect(texts == ["before", "after"])
  }

  @Test(
    "exit statuses: 1 for a refused request, 64 for usage, 69 with the command to start a broker when none is there; CHATBROKER_SOCKET is used"
  )
  func exitStatuses() throws {
    let broker = try BrokerProcess().start()
    let refused = try broker.chatsh("say", "@no-such-user-here", "hi")
    #expect(refused.status == 1)
    #expect(refused.errors.contains("NOSUCHUSER"))
    let usage = try broker.chatsh("history")
    #expect(usage.status == 64)
    #expect(usage.errors.contains("usage: chatsh history"))
    let past = try broker.chatsh("say", "--at", "@1", "#ops", "x")
    #expect(past.status == 64)
    let missing = try runChatsh(["--socket", broker.directory + "/none", "rooms"])
    #expect(missing.status == 69)
    #expect(missing.errors.contains(broker.directory + "/none"))
    #expect(missing.errors.contains("chatbroker --socket"))
    let fromEnvironment = try runChatsh(
      ["rooms"], environment: ["CHATBROKER_SOCKET": broker.socketPath])
    #expect(fromEnvironment.status == 0)
  }

  @Test(
    "--help, each command's --help and --version print to stdout and exit 0; the screen needs a terminal"
  )
  func helpAndVersion() throws {
    let help = try runChatsh(["--help"])
    #expect(help.status == 0 && help.output.contains("usage: chatsh"))
    for command in ["say", "history", "tail", "scheduled", "cancel", "rooms", "who"] {
      let one = try runChatsh([command, "--help"])
      #expect(one.status == 0 && one.output.hasPrefix("usage: chatsh \(command)"))
    }
    let version = try runChatsh(["--version"])
    #expect(version.status == 0 && version.output.hasPrefix("chatsh "))
    let notTerminal = try runChatsh(["#ops"])
    #expect(notTerminal.status == 64)
  }

  @Test(
    "the wrong socket is named at once: the IRC socket, a file that is no socket; an empty history says so"
  )
  func wrongSocketsAndEmptyHistory() throws {
    let broker = try BrokerProcess().start()
    let started = Date()
    let irc = try runChatsh(["--socket", broker.ircSocketPath, "rooms"], timeout: 20)
    #expect(irc.status == 69)
    #expect(irc.errors.contains("is not a chatbroker line socket"), "\(irc.errors)")
    #expect(irc.errors.contains("IRC socket"))
    #expect(Date().timeIntervalSince(started) < 10 * testTimeScale)
    let file = try TemporaryDirectory()
    let notSocket = file.path + "/plain"
    try "x\n".write(toFile: notSocket, atomically: false, encoding: .utf8)
    let plain = try runChatsh(["--socket", notSocket, "rooms"])
    #expect(plain.status == 69)
    #expect(
      plain.errors.contains("\(notSocket) is a regular file, not a socket"), "\(plain.errors)")
    #expect(!plain.errors.contains("start one with"))
    let empty = try broker.chatsh("history", "@nosuchuser")
    #expect(empty.status == 0 && empty.output.isEmpty)
    #expect(empty.errors.contains("no messages in @nosuchuser"), "\(empty.errors)")
    // A room that is not there is an error (historyOfMissingRoomFails).
    let missing = try broker.chatsh("history", "#nosuchroom")
    #expect(missing.status == 1 && missing.output.isEmpty)
    #expect(missing.errors.contains("no such room #nosuchroom"), "\(missing.errors)")
    // Said once: a broker's HELLO, then the answer to chatsh's PING, is read
    // as before, and the command's own reply comes after it.
    let rooms = try broker.chatsh("rooms")
    #expect(rooms.status == 0 && rooms.errors.isEmpty, "\(rooms.errors)")
  }

  @Test(
    "an interrupted tail leaves the rooms it joined, and keeps those that were mine (chatsh(1), tail)",
    arguments: [SIGINT, SIGTERM])
  func interruptedTailLeavesItsRooms(signal: Int32) throws {
    let broker = try BrokerProcess().start()
    // #mine is one of my rooms before tail starts: joined, then disconnected.
    do {
      let client = try broker.connect()
      #expect(try client.request("JOIN #mine").last?.hasPrefix("OK JOIN") == true)
    }
    let tail = try Running.chatsh(["--socket", broker.socketPath, "tail", "#ops", "#team", "#mine"])
    try broker.waitForMember(NSUserName(), in: "#team")
    try broker.waitForMember(NSUserName(), in: "#mine")
    tail.process.signal(signal)
    // Ended by the signal, as before (the status is the signal's number).
    #expect(tail.waitForExit(within: 10) == signal, "\(tail.err.current)")
    let rooms = try broker.connect().request("CONVERSATIONS").filter { $0.hasPrefix("CONV ") }
      .map { $0.split(separator: " ")[1] }
    #expect(rooms == ["#mine"], "\(rooms)")
  }

  @Test("--version names the protocol version the broker's HELLO names (chatbroker(7), HELLO)")
  func versionNamesTheProtocolOfHello() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    // HELLO <version> <user> :<text>
    let hello = client.greeting.split(separator: " ")
    #expect(hello.count > 2 && hello[0] == "HELLO")
    let version = try runChatsh(["--version"])
    #expect(version.output == "chatsh \(hello[1]) (protocol \(hello[1]))\n")
  }

  @Test("chatbench --help and chatfuzz --help and --version print to stdout and exit 0")
  func toolsAnswerHelpAndVersion() throws {
    let bench = try runCommand([BuiltProducts.path("chatbench"), "--help"])
    #expect(bench.status == 0 && bench.output.hasPrefix("usage: chatbench "), "\(bench.errors)")
    let wrong = try runCommand([BuiltProducts.path("chatbench"), "--frob"])
    #expect(wrong.status == 64 && wrong.output.isEmpty && wrong.errors.hasPrefix("usage:"))
    let version = try runCommand([BuiltProducts.path("chatfuzz"), "--version"])
    #expect(version.status == 0 && version.output.hasPrefix("chatfuzz 1."), "\(version.errors)")
    let help = try runCommand([BuiltProducts.path("chatfuzz"), "--help"])
    #expect(help.status == 0 && help.output.hasPrefix("usage: chatfuzz"))
  }
}

/// chatsh(1): what script mode prints and sends, for scripts to rely on.
@Suite struct ScriptOutputTests {
  @Test("a TAB, a backslash and a long line keep history's four TAB-separated fields")
  func tabsAndBackslashesAreEscaped() throws {
    let broker = try BrokerProcess().start()
    #expect(try broker.chatsh("say", "#ops", "a\tb \\ c").status == 0)
    let history = try broker.chatsh("history", "#ops")
    let fields = history.output.split(separator: "\n").first?.split(separator: "\t") ?? []
    #expect(fields.count == 4)
    #expect(fields.last == "a\\tb \\\\ c")
  }

  @Test("build output: escapes, carriage-return progress and BEL are cleaned; a long line is split")
  func buildOutputIsCleaned() throws {
    let broker = try BrokerProcess().start()
    let long = String(repeating: "é", count: 3000)  // 6000 bytes
    let input =
      "\u{1B}]0;make: building\u{7}\u{1B}[1mstep\u{1B}[0m 1\n"
      + " 10%\r 50%\r100%\n" + "ding\u{7}\n" + long + "\n"
    let said = try broker.chatsh("say", "#b", input: input)
    #expect(said.status == 0, "\(said.errors)")
    let texts = try broker.chatsh("history", "--json", "#b").output.split(separator: "\n").map {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String])?["text"] ?? ""
    }
    #expect(texts.prefix(3) == ["step 1", "100%", "ding"])
    #expect(texts.count == 5)
    #expect(texts.dropFirst(3).joined() == long)
    #expect(texts.allSatisfy { !$0.contains("\u{FFFD}") })
  }

  @Test("text given as arguments is cleaned the same way")
  func argumentsAreCleaned() throws {
    let broker = try BrokerProcess().start()
    #expect(try broker.chatsh("say", "#b", "\u{1B}[31mred\u{1B}[0m alert\u{7}").status == 0)
    #expect(try broker.chatsh("history", "#b").output.hasSuffix("\tred alert\n"))
  }
}

/// chatsh(1), `tail --mentions`: only what is for me. Needs root (a second
/// user, nobody, through setpriv).
@Suite struct TailMentionsTests {
  @Test(
    "tail --mentions prints direct messages and mentions of me, nothing else, never mine (real time)",
    UnixUsers.rootOnly("for a second user to write to us"))
  func onlyWhatIsForMeRealTime() throws {
    let broker = try BrokerProcess().start()
    chmod(broker.directory, 0o755)
    let me = NSUserName()
    let before = broker.connectionsOpened(by: me)
    let tail = try Running.chatsh(["--socket", broker.socketPath, "tail", "--mentions", "#ops"])
    let json = try Running.chatsh(["--socket", broker.socketPath, "tail", "--mentions", "--json"])
    try broker.waitForMember(me, in: "#ops")
    // Both tails and WHO's probe.
    try broker.waitForConnections(of: me, count: before + 3)
    func asNobody(_ arguments: String...) throws -> Int32 {
      try runCommand(
        ["/usr/bin/setpriv"] + [
          "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("chatsh"),
          "--socket",
          broker.socketPath,
        ] + arguments
      ).status
    }
    #expect(try asNobody("say", "#ops", "nothing for anyone") == 0)
    #expect(try asNobody("say", "#ops", "@\(me) please look") == 0)
    #expect(try asNobody("say", "#ops", "\(me): the build is green") == 0)
    #expect(try asNobody("say", "#other", "@\(me) in a room not followed") == 0)
    #expect(try asNobody("say", "@\(me)", "psst") == 0)
    #expect(try broker.chatsh("say", "#ops", "@\(me) talking to myself").status == 0)
    #expect(try asNobody("say", "#ops", "last, for nobody") == 0)
    // A last direct message: once both print it, everything before it has
    // been printed or left out.
    #expect(try asNobody("say", "@\(me)", "fence") == 0)
    try waitUntil(timeout: 10, "tail --mentions to print the last direct message") {
      tail.out.current.contains("fence")
    }
    try waitUntil(timeout: 10, "tail --mentions --json to print the last direct message") {
      json.out.current.contains("fence")
    }
    let texts = tail.out.current.split(separator: "\n").map {
      String($0.split(separator: "\t").last ?? "")
    }
    #expect(texts == ["@\(me) please look", "\(me): the build is green", "psst", "fence"])
    let objects = json.out.current.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
    }
    #expect(objects.map { $0["text"] ?? "" } == ["psst", "fence"])
    #expect(objects.first?["target"] == "@nobody")
  }
}

extension TailMentionsTests {
  @Test(
    "tail --mentions without targets prints direct messages sent while the broker restarted (real time)",
    UnixUsers.rootOnly("for a second user to write to us"))
  func directMessagesAcrossRestartRealTime() throws {
    let broker = try BrokerProcess().start()
    chmod(broker.directory, 0o755)
    let me = NSUserName()
    func asNobody(_ arguments: String...) throws -> Int32 {
      try runCommand(
        ["/usr/bin/setpriv"] + [
          "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("chatsh"),
          "--socket",
          broker.socketPath,
        ] + arguments
      ).status
    }
    #expect(try asNobody("say", "@\(me)", "from before tail") == 0)
    let before = broker.connectionsOpened(by: me)
    let tail = try Running.chatsh(["--socket", broker.socketPath, "tail", "--mentions"])
    // Counted from here: the start's readiness probe was root's too, and
    // "one" sent before tail is connected is history to it, not news.
    try broker.waitForConnections(of: me, count: before + 1)
    #expect(try asNobody("say", "@\(me)", "one") == 0)
    try waitUntil(timeout: 10, "tail --mentions to print \"one\"") {
      tail.out.current.contains("one")
    }
    try broker.restart(down: 2)
    #expect(try asNobody("say", "@\(me)", "while you were away") == 0)
    try waitUntil(timeout: 20, "tail --mentions to say it reconnected") {
      tail.err.current.contains("reconnected")
    }
    #expect(try asNobody("say", "@\(me)", "after") == 0)
    try waitUntil(timeout: 10, "tail --mentions to print \"after\"") {
      tail.out.current.contains("after")
    }
    let texts = tail.out.current.split(separator: "\n").map {
      String($0.split(separator: "\t").last ?? "")
    }
    #expect(texts == ["one", "while you were away", "after"])
  }

  @Test(
    "a user's chatsh that finds no broker says where it looked and what it expects there",
    UnixUsers.required,
    .enabled(if: access("/run/chatbroker", F_OK) != 0, "this host has a system broker's directory"))
  func noBrokerSaysWhereItLooked() throws {
    try UnixUsers.ensure()
    let user = UnixUsers.names[0]
    let perUser = "/tmp/chatbroker-\(try AsUser.uid(user))/chatbroker.sock"
    let said = try AsUser.run(
      user, [BuiltProducts.path("chatsh"), "say", "--wait", "0", "#general", "x"])
    #expect(said.status == 69)
    #expect(
      said.errors.contains(
        "(chatsh looked for /run/chatbroker/chatbroker.sock, then \(perUser); neither is there,"
          + " nor /run/chatbroker)"), "\(said.errors)")
    #expect(said.errors.contains("start one with: chatbroker --socket \(perUser) &"))
  }

  @Test(
    "history of a room not there, or that you may not read, exits 1 with one message; a quiet one 0",
    UnixUsers.required)
  func historyOfMissingRoomFails() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let owner = try broker.connect(as: "cbtest2")
    for line in [
      "JOIN #secret", "ACCESS #secret invite", "SAY #secret :not for you", "JOIN #quiet",
    ] {
      #expect(try owner.request(line).last?.hasPrefix("OK ") == true, "\(line)")
    }
    func history(_ room: String) throws -> CommandResult {
      try AsUser.run(
        "cbtest1", [BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "history", room])
    }
    let missing = try history("#nosuch")
    #expect(missing.status == 1)
    #expect(missing.errors == "chatsh: no such room #nosuch, or you may not read it\n")
    let hidden = try history("#secret")
    #expect(hidden.status == 1)
    #expect(hidden.output.isEmpty)
    #expect(hidden.errors == missing.errors.replacingOccurrences(of: "#nosuch", with: "#secret"))
    let quiet = try history("#quiet")
    #expect(quiet.status == 0)
    #expect(quiet.errors == "chatsh: no messages in #quiet (nobody has written there yet)\n")
  }

  @Test("plain history shows an action as the screen does: * user text")
  func historyShowsActions() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    #expect(try client.request("ACTION #ops :waves").last?.hasPrefix("OK ACTION ") == true)
    let history = try broker.chatsh("history", "#ops")
    #expect(history.output.hasSuffix("\t#ops\t\(NSUserName())\t* \(NSUserName()) waves\n"))
    let json = try broker.chatsh("history", "--json", "#ops")
    #expect(json.output.contains("\"text\":\"waves\""))
  }

  @Test("a TZ that names no zone is said once on standard error, with the zone used")
  func invalidZoneIsSaid() throws {
    let broker = try BrokerProcess().start()
    #expect(try broker.chatsh("say", "#ops", "hello").status == 0)
    let history = try broker.chatsh("history", "#ops", environment: ["TZ": "Mars/Olympus"])
    #expect(history.status == 0)
    #expect(
      history.errors.components(separatedBy: "TZ=Mars/Olympus is not a zone").count == 2,
      "\(history.errors)")
    #expect(history.errors.contains(": times are in "))
  }

  @Test(
    "say --reply answers a message, thread prints it and its replies (also as JSON), amend changes mine; each refusal exits 1"
  )
  func replyThreadAndAmend() throws {
    let broker = try BrokerProcess().start()
    let other = try broker.connect(as: NSUserName())
    _ = try other.request("JOIN #ops")
    let asked = try other.request("SAY #ops who deploys?").last ?? ""
    let id = String(asked.split(separator: " ")[2])
    _ = try other.request("SAY #ops lunch?")

    let replied = try broker.chatsh("say", "--reply", id, "#ops", "me, at 1800")
    #expect(replied.status == 0 && replied.errors.isEmpty, "\(replied)")
    let seen = try other.expect("MSG #ops ")
    #expect(seen.contains(" REPLY \(id) :me, at 1800"), "\(seen)")
    let piped = try broker.chatsh("say", "--reply", id, "#ops", input: "and a second\n")
    #expect(piped.status == 0, "\(piped)")
    let second = String(try other.expect("MSG #ops ").split(separator: " ")[2])

    let thread = try broker.chatsh("thread", "#ops", id)
    #expect(thread.status == 0, "\(thread)")
    let texts = thread.output.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" }
    #expect(texts == ["who deploys?", "me, at 1800", "and a second"], "\(thread.output)")
    let one = try broker.chatsh("thread", "-n", "1", "--json", "#ops", id)
    let objects = one.output.split(separator: "\n")
    #expect(objects.count == 2 && objects[1].contains("\"reply_to\":\"\(id)\""), "\(one.output)")
    #expect(one.errors.contains("more replies follow"), "\(one.errors)")
    let alone = try broker.chatsh("thread", "#ops", second)
    #expect(alone.status == 0 && alone.errors.contains("no replies to \(second) yet"))

    let amended = try broker.chatsh("amend", "#ops", second, "and a third,\u{1B}[31m\nfixed")
    #expect(amended.status == 0, "\(amended)")
    #expect(
      try other.expect("AMEND #ops ").hasSuffix(" :and a third, fixed"),
      "escapes cleaned off, lines run on, as say's text")
    #expect(try broker.chatsh("thread", "#ops", id).output.contains("\tand a third, fixed\n"))

    let missing = try broker.chatsh("thread", "#ops", "zz9")
    #expect(missing.status == 1 && missing.errors.contains("NOSUCHMSG"), "\(missing)")
    let nowhere = try broker.chatsh("say", "--reply", "zz9", "#ops", "to nothing")
    #expect(nowhere.status == 1 && nowhere.errors.contains("NOSUCHMSG"), "\(nowhere)")
    let notMine = try broker.chatsh("amend", "#ops", "zz9", "x")
    #expect(notMine.status == 1 && notMine.errors.contains("NOSUCHMSG"), "\(notMine)")
    let usage = try broker.chatsh("say", "--reply", id, "--block", "#ops", "x")
    #expect(usage.status == 64 && usage.errors.contains("--reply cannot go with"), "\(usage)")
  }
}
