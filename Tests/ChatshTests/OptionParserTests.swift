import Testing

@testable import ChatClient

@Suite struct OptionParserTests {
  @Test("chatsh with rooms and people and no command opens the chat screen on them")
  func interactiveWithRooms() throws {
    let invocation = try OptionParser.parse(["--socket", "/tmp/s", "#general", "@bob"])
    #expect(invocation.socket == "/tmp/s")
    #expect(invocation.command == .interactive(targets: ["#general", "@bob"]))
  }

  @Test(
    "each command line parses to the command it names",
    arguments: [
      (
        ["say", "#ops", "hello", "-n", "x"],
        Command.say(target: "#ops", at: nil, text: ["hello", "-n", "x"])
      ),
      (["say", "#ops"], .say(target: "#ops", at: nil, text: nil)),
      (["say", "--at", "18:00", "#ops", "go"], .say(target: "#ops", at: "18:00", text: ["go"])),
      (["say", "--at=+10m", "@bob", "hi"], .say(target: "@bob", at: "+10m", text: ["hi"])),
      (["history", "#ops"], .history(target: "#ops", count: nil, json: false)),
      (["history", "-n", "5", "--json", "#ops"], .history(target: "#ops", count: 5, json: true)),
      (["history", "#ops", "-n5"], .history(target: "#ops", count: 5, json: false)),
      (["tail", "#a", "#b", "--json"], .tail(targets: ["#a", "#b"], count: 0, json: true)),
      (["scheduled"], .scheduled(json: false)),
      (["cancel", "1jm"], .cancel(id: "1jm")),
      (
        ["react", "#ops", "42", "👍"],
        .react(target: "#ops", id: "42", reaction: "👍", removed: false)
      ),
      (
        ["unreact", "@bob", "7", "+1"],
        .react(target: "@bob", id: "7", reaction: "+1", removed: true)
      ),
      (["rooms", "--json"], .rooms(json: true)),
      (["who", "#ops"], .who(room: "#ops", json: false)),
      (["web"], .web(revoke: false)),
      (["web", "--revoke"], .web(revoke: true)),
      (["web", "--help"], .help(command: "web")),
      (["--help"], .help(command: nil)),
      (["say", "--help"], .help(command: "say")),
      (["help", "tail"], .help(command: "tail")),
      (["--version"], .version),
      ([], .interactive(targets: [])),
    ])
  func commands(arguments: [String], expected: Command) throws {
    #expect(try OptionParser.parse(arguments).command == expected)
  }

  @Test(
    "a command line that is wrong is a usage error, never a guess",
    arguments: [
      ["say"], ["say", "--at", "18:00", "#ops"], ["say", "ops", "x"], ["history"],
      ["history", "#a", "#b"], ["history", "-n", "0", "#a"], ["history", "-n", "x", "#a"],
      ["tail"], ["cancel"], ["cancel", "no-dashes"], ["who", "@bob"], ["rooms", "extra"],
      ["react", "#ops", "42"], ["react", "#ops", "42", "a,b"], ["react", "ops", "42", "👍"],
      ["react", "#ops", "4-2", "👍"], ["unreact", "#ops", "42", "👍", "x"],
      ["react", "--json", "#ops", "42", "👍"],
      ["frobnicate"], ["--bogus"], ["--socket"], ["--color", "purple", "rooms"],
      ["scheduled", "--at", "18:00"], ["say", "--wait", "-1", "#a", "x"],
      ["say", "--wait", "86401", "#a", "x"], ["say", "--wait", "soon", "#a", "x"],
      ["history", "--wait", "5", "#a"], ["history", "--mentions", "#a"],
      ["web", "now"], ["web", "--json"], ["rooms", "--revoke"], ["--revoke", "web"],
      ["say", "--reply", "no-id!", "#a", "x"], ["say", "--reply", "4", "--block", "#a"],
      ["say", "--reply", "4", "--at", "18:00", "#a", "x"], ["history", "--reply", "4", "#a"],
      ["thread", "#a"], ["thread", "#a", "4", "5"], ["thread", "-n", "0", "#a", "4"],
      ["thread", "a", "4"], ["amend", "#a", "4"], ["amend", "#a", "x!", "text"],
      ["amend", "--json", "#a", "4", "x"],
    ])
  func usageErrors(arguments: [String]) {
    #expect(throws: UsageError.self) { try OptionParser.parse(arguments) }
  }

  @Test("say --wait takes 0 to 86400 seconds, 60 when not given; tail --mentions needs no target")
  func waitAndMentions() throws {
    #expect(try OptionParser.parse(["say", "#a", "x"]).wait == 60)
    #expect(try OptionParser.parse(["say", "--wait", "0", "#a", "x"]).wait == 0)
    #expect(try OptionParser.parse(["say", "--wait=86400", "#a"]).wait == 86400)
    #expect(
      try OptionParser.parse(["tail", "--mentions"]).command
        == .tail(targets: [], count: 0, json: false, mentions: true))
    #expect(
      try OptionParser.parse(["tail", "--mentions", "--json", "#ops"]).command
        == .tail(targets: ["#ops"], count: 0, json: true, mentions: true))
  }

  @Test(
    "say --reply ID, thread [-n N] [--json] TARGET ID, amend TARGET ID TEXT (which may start with -)"
  )
  func replyThreadAndAmend() throws {
    let reply = try OptionParser.parse(["say", "--reply", "42", "#ops", "done"])
    #expect(reply.replyTo == "42" && reply.command == .say(target: "#ops", at: nil, text: ["done"]))
    #expect(
      try OptionParser.parse(["thread", "-n", "5", "--json", "#ops", "42"]).command
        == .thread(target: "#ops", id: "42", count: 5, json: true))
    #expect(
      try OptionParser.parse(["thread", "@bob", "42"]).command
        == .thread(target: "@bob", id: "42", count: nil, json: false))
    #expect(
      try OptionParser.parse(["amend", "#ops", "42", "-", "now", "--json"]).command
        == .amend(target: "#ops", id: "42", text: ["-", "now", "--json"]))
  }

  @Test("--socket and --color may come after the command")
  func socketAndColorAnywhere() throws {
    let invocation = try OptionParser.parse(["rooms", "--socket=/x", "--color", "never"])
    #expect(invocation.socket == "/x")
    #expect(invocation.color == .never)
  }

  @Test(
    "the socket: --socket, then CHATBROKER_SOCKET, the system socket, $XDG_RUNTIME_DIR, /tmp/chatbroker-UID"
  )
  func socketResolution() {
    let none: (String) -> Bool = { _ in false }
    #expect(SocketPath.resolve(option: "/o", environment: ["CHATBROKER_SOCKET": "/e"]).path == "/o")
    #expect(
      SocketPath.resolve(option: nil, environment: ["CHATBROKER_SOCKET": "/e"], exists: none).path
        == "/e")
    #expect(
      SocketPath.resolve(option: nil, environment: [:], exists: { _ in true }).path
        == SocketPath.system)
    #expect(
      SocketPath.resolve(
        option: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/7"], uid: 7, exists: none
      ).path
        == "/run/user/7/chatbroker/chatbroker.sock")
    #expect(
      SocketPath.resolve(option: nil, environment: [:], uid: 42, exists: none).path
        == "/tmp/chatbroker-42/chatbroker.sock")
    // Root's broker binds the system socket, so root is sent there even
    // before it exists (chatbroker(8), FILES).
    #expect(
      SocketPath.resolve(
        option: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/0"], uid: 0, exists: none
      ).path
        == SocketPath.system)
  }

  @Test(
    "a stopped system broker is awaited where it binds: its directory is kept, the socket is gone"
  )
  func stoppedSystemBrokerIsFound() {
    let user: UInt32 = 1000
    let perUser = "/tmp/chatbroker-1000/chatbroker.sock"
    // /run/chatbroker stays while the system broker is stopped or restarting.
    let stopped = SocketPath.resolve(
      option: nil, environment: [:], uid: user, exists: { $0 == SocketPath.systemDirectory })
    #expect(stopped.path == SocketPath.system)
    #expect(
      stopped.searchNote
        == "(chatsh looked for \(SocketPath.system), then \(perUser); neither is there, but"
        + " /run/chatbroker is: the system broker is stopped or restarting)")
    // A broker of the user's own that is running is still the one used.
    let own = SocketPath.resolve(
      option: nil, environment: [:], uid: user,
      exists: { $0 == SocketPath.systemDirectory || $0 == perUser })
    #expect(own.path == perUser)
    // A named socket is the only one tried: nothing to say of a search.
    #expect(SocketPath.resolve(option: "/o", environment: [:]).searchNote == nil)
  }
}
