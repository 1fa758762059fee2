import Foundation
import LineProtocol

@testable import Broker

/// Target `irc`: arbitrary bytes from an IRC client (alice), cut into lines
/// by the framer at IRC's limit (512 bytes and 4096 of tags), read by her
/// IRC session, its requests handled by an engine on a fake clock, and the
/// engine's events encoded back through the sessions: hers, bob's (an IRC
/// client with every capability) and carol's (the line protocol). Every
/// IRC line must end in CR LF, hold no NUL, bare CR or LF, and be at most
/// 512 bytes after its tags (chatbroker(7), "IRC"); every line-protocol
/// line must be clean, as in the `request` target.
///
/// The first byte: its low 7 bits are the size of the pieces the input
/// arrives in; its high bit registers alice with every capability before
/// the input, so that the input need not.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIRC(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  var input = FuzzInput(data, count)
  let selector = input.byte()
  let bytes = input.rest
  let world = IRCWorld()
  let alice = world.connectIRC("alice")
  let bob = world.connectIRC("bob")
  world.send(bob, IRCWorld.registration("bob"))
  world.send(bob, "JOIN #a,#hot\r\n")
  let carol = world.world.connect("carol")
  world.world.receive(.line("JOIN #a"), from: carol)
  if selector & 0x80 != 0 { world.send(alice, IRCWorld.registration("alice")) }

  var framer = LineFramer(maximumLineBytes: IRCWorld.maximumLineBytes)
  let pieceLength = max(1, Int(selector & 0x7F))
  var start = 0
  while start < bytes.count {
    let end = min(bytes.count, start + pieceLength)
    framer.append(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    while let frame = framer.next() { world.receive(frame, from: alice) }
    start = end
  }
  if let last = framer.finish() { world.receive(last, from: alice) }
  // Whatever was scheduled comes due, to everyone still connected.
  world.world.clock.now = world.world.clock.now + 400 * 86_400_000
  world.world.engine.timerFired()
  return 0
}

/// Every call into IRCSession is in this one function, so that a change of
/// its API (actions grouped per target, say) is adapted here alone: a
/// framed line (or a refused one) becomes its actions, in order; an engine
/// event for the session becomes a reply of its bytes.
func callSession(_ session: IRCSession, _ call: SessionCall) -> [IRCSession.Action] {
  switch call {
  case .frame(.line(let line)): return session.receive(line)
  case .frame(let refused): return session.refuse(refused)
  case .event(let outgoing, let context):
    return [.reply(session.encode(outgoing, answering: context, mayDefer: false))]
  case .nextStep: return session.nextStep() ?? []
  }
}

/// What is asked of a session: read a frame, encode an event, or hand
/// over the next step of a line that named several targets.
enum SessionCall {
  case frame(Frame)
  /// An event, and the reply context of the request it answers, if any.
  case event(Outgoing, ReplyContext?)
  case nextStep
}

/// A ``FuzzWorld`` whose engine also serves IRC clients, as the server's
/// IRC listener does (Server+Requests): their sessions turn lines into
/// requests and the engine's events into IRC lines, which are checked.
final class IRCWorld {
  static let maximumLineBytes = 512 + 4096

  final class Output: EngineOutput {
    var sessions: [ConnectionID: IRCSession] = [:]
    var closed: Set<ConnectionID> = []
    /// What the replies being sent answer, per connection, as the server's
    /// `Connection.answering`.
    var answering: [ConnectionID: ReplyContext] = [:]
    let lineOutput = FuzzWorld.Output()

    func send(_ outgoing: Outgoing, to connection: ConnectionID, kind: LineKind) {
      guard let session = sessions[connection] else {
        lineOutput.send(outgoing, to: connection, kind: kind)
        return
      }
      let actions = callSession(
        session, .event(outgoing, answering[connection]))
      for case .reply(let bytes, _) in actions {
        checkIRCBytes(bytes, "event \(outgoing.event) to \(connection)")
      }
    }

    func close(_ connection: ConnectionID) { closed.insert(connection) }
    func armTimer(at due: Timestamp?) {}
  }

  let world = FuzzWorld()
  let output = Output()
  lazy var gateway = IRCGateway(
    serverName: "host.test", timeZone: world.clock.timeZone, backlog: 5)

  init() {
    world.engine.attach(output)
  }

  /// Connects `user` over IRC, unregistered.
  func connectIRC(_ user: String) -> ConnectionID {
    let id = world.connect(user)
    output.sessions[id] = gateway.session(
      user: user, reader: EngineReader(engine: world.engine, user: user))
    return id
  }

  /// Registration with every capability the gateway offers.
  static func registration(_ nick: String) -> String {
    "CAP LS 302\r\nCAP REQ :server-time message-tags echo-message batch draft/chathistory "
      + "draft/read-marker\r\nNICK \(nick)\r\nUSER \(nick) 0 * :\(nick)\r\nCAP END\r\n"
  }

  /// Bytes from a client, framed as the server frames them.
  func send(_ connection: ConnectionID, _ text: String) {
    var framer = LineFramer(maximumLineBytes: Self.maximumLineBytes)
    framer.append(Array(text.utf8))
    while let frame = framer.next() { receive(frame, from: connection) }
  }

  /// One frame from an IRC client: its actions carried out as the server
  /// does (Server+Requests' `perform`), every reply checked.
  func receive(_ frame: Frame, from connection: ConnectionID) {
    guard let session = output.sessions[connection], !output.closed.contains(connection)
    else { return }
    if case .line(let line) = frame, line.utf8.contains(UInt8(ascii: "\n")) {
      fatalError("framed line holds an LF")
    }
    let engine = world.engine
    var actions = callSession(session, .frame(frame))
    // A line's other targets, one step each, as the server's turns serve them.
    while !actions.isEmpty {
      for action in actions {
        guard !output.closed.contains(connection) else { return }
        switch action {
        case .reply(let bytes, _): checkIRCBytes(bytes, "reply to \(shown(frame))")
        case .request(let request, let context):
          output.answering[connection] = context
          engine.receive(request, from: connection)
          output.answering[connection] = nil
          if let context { session.answered(context) }
        case .refused(let error): engine.refuse(error, from: connection)
        case .close:
          engine.disconnect(connection)
          output.closed.insert(connection)
        case .admit:
          // Only the web door's codec admits by token.
          fatalError("an IRC session admitted a web token")
        }
      }
      actions = callSession(session, .nextStep)
    }
    world.clock.now = world.clock.now + 1
  }
}

/// What the gateway sends must be IRC lines: each ends in CR LF and holds
/// no NUL, no CR and no LF before it, and is at most 512 bytes after its
/// tags, CR LF included (chatbroker(7), "IRC"); anything else could forge a
/// line on a client that ends lines at CR, or be cut by one that reads 512.
func checkIRCBytes(_ bytes: [UInt8], _ what: @autoclosure () -> String) {
  var start = 0
  while start < bytes.count {
    guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
      fatalError("\(what()): bytes after the last line: \(shown(bytes[start...]))")
    }
    let line = bytes[start..<newline]
    guard line.last == UInt8(ascii: "\r") else {
      fatalError("\(what()): line without CR LF: \(shown(line))")
    }
    let body = line.dropLast()
    if body.contains(0) { fatalError("\(what()): NUL in \(shown(line))") }
    if body.contains(UInt8(ascii: "\r")) { fatalError("\(what()): bare CR in \(shown(line))") }
    var message = body
    if message.first == UInt8(ascii: "@") {
      let space = message.firstIndex(of: UInt8(ascii: " ")) ?? message.endIndex
      message = message[space...].dropFirst()
    }
    if message.count + 2 > 512 {
      fatalError("\(what()): \(message.count + 2) bytes after the tags: \(shown(line))")
    }
    start = newline + 1
  }
}

private func shown(_ frame: Frame) -> String {
  guard case .line(let line) = frame else { return "\(frame)" }
  return shown(Array(line.utf8)[...])
}

private func shown(_ bytes: ArraySlice<UInt8>) -> String {
  String(decoding: bytes.prefix(200), as: UTF8.self).debugDescription
}
