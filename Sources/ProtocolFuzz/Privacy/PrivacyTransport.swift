/// A session of the privacy scenario: one connection of one user, on the
/// line protocol or IRC.
public struct PrivacySession: Hashable, Sendable {
  public let id: Int
  public let user: String
  public let wire: PrivacyWire

  public init(id: Int, user: String, wire: PrivacyWire) {
    self.id = id
    self.user = user
    self.wire = wire
  }
}

public enum PrivacyWire: Hashable, Sendable {
  case line
  case irc
}

/// Where the privacy scenario's requests go: the real broker over its
/// sockets (chatfuzz), or the engine on virtual time (the tests). A
/// transport tells its ``PrivacyOracle`` of every session it opens, every
/// request it sends and every line any session gets, as it gets it.
public protocol PrivacyTransport: AnyObject {
  /// The clock the model's times are on, in seconds.
  var now: Double { get }
  /// The run is over: requests are no longer answered.
  var stopping: Bool { get }
  /// Counts the broker's restarts that were not the scenario's own (after
  /// a crash, maybe on a fresh state): what was made before is gone.
  var epoch: Int { get }
  /// Opens a session of `user`, greeted (line) or registered with these
  /// capabilities (IRC); nil when it cannot.
  func open(_ user: String, _ wire: PrivacyWire, capabilities: [String]) -> PrivacySession?
  /// Sends one request and waits for its answer; returns the lines the
  /// session got meanwhile, the answer's last (on the line protocol its
  /// `OK` or `ERR`). nil when the session ended or did not answer in time.
  func request(_ line: String, on session: PrivacySession) -> [String]?
  func isOpen(_ session: PrivacySession) -> Bool
  func close(_ session: PrivacySession)
  /// Lets `seconds` pass, reading every session.
  func pass(_ seconds: Double)
  /// Makes a Unix group of the run's own; false when it cannot.
  func makeGroup(_ name: String) -> Bool
  /// `gpasswd -a` or `-d`, returning once it is done.
  func setMember(_ user: String, of group: String, _ member: Bool) -> Bool
  /// Keeps everybody but the scenario away from the broker and, with
  /// `restart`, stops it and starts it again on its state; every session
  /// ends. False when it cannot.
  func quiet(restart: Bool) -> Bool
  /// Lets everybody back after ``quiet(restart:)``.
  func loud()
}
