import Foundation
import LineProtocol
import TestSupport

@testable import Broker

/// IRC clients on an ``EngineHarness``: each has an ``IRCSession`` whose
/// actions are carried out as the shell does, on virtual time. The engine
/// harness never holds a line for a sync: each is encoded when sent, with
/// the reply context of the request being handled.
final class IRCHarness {
  let engine: EngineHarness
  private var sessions: [ConnectionID: IRCSession] = [:]
  /// What the replies being sent answer, per connection (the server's
  /// `Connection.answering`).
  private var answering: [ConnectionID: ReplyContext] = [:]
  /// Whether lines may be deferred, as the server lets a codec defer the
  /// lines it writes at once, with nothing they wait for (a CHATHISTORY's
  /// pages); this harness never holds a line for a sync.
  var defersLines = false

  init(_ engine: EngineHarness = EngineHarness(), backlog: Int = 50) {
    self.engine = engine
    gateway = IRCGateway(
      serverName: "host.test", timeZone: engine.clock.timeZone, backlog: backlog,
      directory: IRCDirectory(now: { [clock = engine.clock] in
        Int(clock.now.milliseconds / 1000)
      }))
  }

  /// The sessions' shared state, with real names and idle times on the
  /// engine's clock.
  let gateway: IRCGateway

  /// Connects `user` over IRC without registering.
  func open(_ user: String) -> ConnectionID {
    let id = ConnectionID(1000 + sessions.count)
    let session = gateway.session(
      user: user, reader: EngineReader(engine: engine.engine, user: user))
    sessions[id] = session
    engine.output.encoders[id] = { [unowned self] outgoing, _ in
      session.encode(outgoing, answering: answering[id], mayDefer: defersLines)
    }
    engine.engine.connect(id, user: user)
    return id
  }

  /// Connects and registers, with these capabilities, and drops the burst.
  func connect(_ user: String, caps: [String] = []) -> ConnectionID {
    let id = open(user)
    if !caps.isEmpty {
      send(id, "CAP LS 302")
      send(id, "CAP REQ :" + caps.joined(separator: " "))
    }
    send(id, "NICK \(user)")
    send(id, "USER \(user) 0 * :\(user)")
    if !caps.isEmpty { send(id, "CAP END") }
    _ = take(id)
    return id
  }

  func session(_ id: ConnectionID) -> IRCSession { sessions[id]! }

  /// Feeds one line; returns every IRC line the connection has got since.
  @discardableResult
  func send(_ id: ConnectionID, _ line: String) -> [String] {
    let session = sessions[id]!
    var actions = session.receive(line)
    // The other steps of a line with several targets, as the server's
    // turns serve them.
    while true {
      perform(actions, for: id)
      guard let step = session.nextStep() else { break }
      actions = step
    }
    return take(id)
  }

  /// Carries out actions as the server does (Server+Requests).
  func perform(_ actions: [WireAction], for id: ConnectionID) {
    for action in actions {
      switch action {
      case .reply(let bytes, _): engine.output.encoded[id, default: []] += bytes
      case .request(let request, let context):
        answering[id] = context
        engine.engine.receive(request, from: id)
        answering[id] = nil
        if let context { sessions[id]!.answered(context) }
      case .refused(let error): engine.engine.refuse(error, from: id)
      case .close: engine.engine.disconnect(id)
      case .admit: preconditionFailure("an IRC session asked for the browser door's admission")
      }
    }
  }

  /// The IRC lines the connection got, without their CR LF.
  func take(_ id: ConnectionID) -> [String] {
    let bytes = engine.output.encoded[id] ?? []
    engine.output.encoded[id] = []
    return String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").filter {
      !$0.isEmpty
    }
  }
}
