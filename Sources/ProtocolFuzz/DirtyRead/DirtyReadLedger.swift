import Synchronization

/// The dirty-read oracle's books, shared by every thread of a run: which
/// fingerprints (``Fingerprint``) were rolled back, which lines showed
/// which, and the messages acknowledged, to look for after a restart. A
/// line that shows a rolled-back change is a finding whichever came first,
/// the line or the refusal: the broker promises that nothing is shown
/// before it is durable (chatbroker(7), "Order and durability").
public final class DirtyReadLedger: Sendable {
  /// Off unless the run has failing syncs: then every line any fuzzing
  /// session gets passes through ``saw(_:viewer:session:)`` cheaply.
  public let enabled: Bool
  public let findings = FindingLog()
  private let serials = Atomic<Int>(0)
  private let state = Locked(Books())

  /// One side of a dirty read: a request refused, or a line that showed it.
  private struct Books {
    var refused: [Fingerprint: String] = [:]
    var seen: [Fingerprint: Sighting] = [:]
    var reported: Set<Fingerprint> = []
    var acknowledged: [AcknowledgedMessage] = []
  }

  /// Where a fingerprint was first seen.
  private struct Sighting {
    var line: String
    var session: String
  }

  /// A message whose `OK` came: after a restart its room's HISTORY must
  /// hold it (`id` when the wire told it).
  public struct AcknowledgedMessage: Sendable {
    public var room: String
    public var token: String
    public var id: String?
    /// Who may read the room.
    public var reader: String
  }

  public init(enabled: Bool) {
    self.enabled = enabled
  }

  /// A number no other token of the run has.
  public func nextSerial() -> Int {
    serials.add(1, ordering: .relaxed).newValue
  }

  /// `request` was answered `answer`, a refusal for want of storage: what
  /// it would have changed was rolled back and may never show.
  public func refused(_ fingerprint: Fingerprint, request: String, answer: String) {
    let earlier = state.withLock { books -> Sighting? in
      books.refused[fingerprint] = "\(request) (answered \(answer))"
      return books.seen[fingerprint]
    }
    if let earlier { report(fingerprint, shownBy: earlier.line, to: earlier.session) }
  }

  /// Checks a line a session of `viewer` received; `session` names it in
  /// a finding.
  public func saw(_ line: [UInt8], viewer: String, session: @autoclosure () -> String) {
    guard enabled else { return }
    let shown = Fingerprint.shown(in: line, viewer: viewer)
    guard !shown.isEmpty else { return }
    let text = String(decoding: line.prefix(300), as: UTF8.self)
    let name = session()
    let dirty = state.withLock { books in
      shown.filter { fingerprint in
        if books.seen[fingerprint] == nil {
          books.seen[fingerprint] = Sighting(line: text, session: name)
        }
        return books.refused[fingerprint] != nil
      }
    }
    for fingerprint in dirty { report(fingerprint, shownBy: text, to: name) }
  }

  /// A message acknowledged: the durability check looks for it.
  public func acknowledged(_ message: AcknowledgedMessage) {
    state.withLock { $0.acknowledged.append(message) }
  }

  /// Forgets the acknowledged messages: the broker was started afresh.
  public func forgetAcknowledged() {
    state.withLock { $0.acknowledged.removeAll() }
  }

  public var acknowledgedMessages: [AcknowledgedMessage] {
    state.withLock { $0.acknowledged }
  }

  /// How many requests were refused for want of storage.
  public var refusedCount: Int {
    state.withLock { $0.refused.count }
  }

  /// One finding per kind of request and kind of line: `MODE +m shown in
  /// OK MODE`, so that each way of showing a rolled-back change is one.
  private func report(_ fingerprint: Fingerprint, shownBy line: String, to session: String) {
    let request = state.withLock { books -> String? in
      guard books.reported.insert(fingerprint).inserted else { return nil }
      return books.refused[fingerprint]
    }
    guard let request else { return }
    let words = LineWords(Array(line.utf8))
    let shownIn =
      words.command == "OK" || words.command == "ERR"
      ? "\(words.command) \(words.parameters.first ?? "")" : words.command
    findings.record(
      Finding(
        category: "dirty-read",
        summary:
          "a rolled-back \(Self.kind(of: request)) was shown in a \(words.irc ? "IRC " : "")\(shownIn) line",
        detail: "\(session) got \"\(line)\", showing \(fingerprint), yet \(request)"))
  }

  /// `MODE +m`, `SAY`, `PRIVMSG`, `JOIN invite`: a request's verb, and
  /// for MODE its change.
  /// `request` may go on with the answer it got (`JOIN #r (answered
  /// ...)`), which is not part of its words.
  public static func kind(of request: String) -> String {
    let asked = request.range(of: " (answered ").map { request[..<$0.lowerBound] } ?? request[...]
    let words = asked.split(separator: " ")
    guard let verb = words.first?.uppercased() else { return "request" }
    if verb == "MODE", words.count > 2 { return "MODE \(words[2])" }
    if verb == "JOIN", words.count > 2 {
      return "JOIN \(words[2].hasPrefix("key") ? "key" : "invite")"
    }
    return verb
  }
}
