import CShims
import Glibc
import LineProtocol

/// Who is on the other end of a connection, as the kernel says
/// (`SO_PEERCRED`): never what a client claims.
public enum PeerCredentials {
  public static func uid(of fd: Int32) throws(SystemError) -> uid_t {
    var uid: uid_t = 0
    var pid: pid_t = 0
    try systemCall("getsockopt SO_PEERCRED") { chat_peer_uid(fd, &uid, &pid) }
    return uid
  }
}

/// Login names from the password database (NSS), cached per uid: a name is
/// looked up once per uid for the life of the broker.
public final class SystemUsers: UserDirectory {
  private var names: [uid_t: String] = [:]
  /// uids whose passwd entry has a name the protocol cannot carry: they
  /// are known as `uid1234` even while nobody of them is connected.
  private var unnamedEntries: Set<uid_t> = []

  public init() {}

  /// The login name of `uid`, or `uid1234` when it has no passwd entry.
  public func name(of uid: uid_t) -> String {
    if let name = names[uid] { return name }
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
    let name: String
    if status == 0, result != nil, let cName = entry.pw_name,
      case let text = String(cString: cName), UserName.isValid(text)
    {
      name = text
    } else {
      name = "uid\(uid)"
      if status == 0 && result != nil { unnamedEntries.insert(uid) }
    }
    names[uid] = name
    return name
  }

  /// Whether the password database knows `name`. A `uid1234` with no
  /// passwd entry at all is nobody (chatbroker(7) NOSUCHUSER); the engine
  /// still lets people write to such a uid while it is connected.
  public func userExists(_ name: String) -> Bool {
    if name.hasPrefix("uid"), let uid = uid_t(name.dropFirst(3)), self.name(of: uid) == name,
      unnamedEntries.contains(uid)
    {
      return true
    }
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    return getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0 && result != nil
  }
}
