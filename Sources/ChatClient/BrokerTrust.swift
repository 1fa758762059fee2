import CShims

#if canImport(Glibc)
  import Glibc
#endif

/// Whom chatsh believes to be the broker: who answers on the socket is read
/// from the kernel (`SO_PEERCRED`) right after connecting, before anything
/// is sent. Trusted are root (also systemd, which owns the listening socket
/// under socket activation), the user running chatsh, the user named
/// `chatbroker` (the system service's user, static or `DynamicUser=`), and
/// whoever `--trust-user` or `CHATBROKER_TRUST_USER` names. Anyone else
/// may have put their own listener where the broker's socket should be
/// (see chatsh(1), SECURITY).
public struct BrokerTrust: Equatable, Sendable {
  /// The user the system service runs as (`User=` in chatbroker.service).
  public static let systemUser = "chatbroker"

  /// Further users, by login name or numeric uid.
  public var users: [String]

  public init(users: [String] = []) {
    self.users = users
  }

  /// The `--trust-user` options, then the names in `CHATBROKER_TRUST_USER`
  /// (separated by commas or spaces).
  public init(options: [String], environment: [String: String]) {
    let fromEnvironment = (environment["CHATBROKER_TRUST_USER"] ?? "")
      .split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    self.init(users: options + fromEnvironment)
  }

  /// Whether a broker running as `uid` (named `name`) is to be believed.
  public func trusts(uid: UInt32, name: String?, me: UInt32 = getuid()) -> Bool {
    if uid == 0 || uid == me || users.contains(String(uid)) { return true }
    guard let name else { return false }
    return name == Self.systemUser || users.contains(name)
  }

  /// Throws ``ConnectionError/untrusted(path:uid:name:)`` unless the peer
  /// of the connected socket `fd` is trusted.
  func check(_ fd: Int32, path: String) throws(ConnectionError) {
    var uid: uid_t = 0
    var pid: pid_t = 0
    guard chat_peer_uid(fd, &uid, &pid) == 0 else {
      throw .system(call: "getsockopt SO_PEERCRED", errno: errno)
    }
    let name = Self.loginName(of: uid)
    guard trusts(uid: uid, name: name) else {
      throw .untrusted(path: path, uid: uid, name: name)
    }
  }

  static func loginName(of uid: uid_t) -> String? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil,
      let name = entry.pw_name
    else { return nil }
    return String(cString: name)
  }
}
