import CShims
import Glibc

/// Connects to the Unix stream socket at `path` as the Unix user `user`, a
/// login name or a bare uid (with the same number as its group, as
/// `setpriv --reuid` takes it), without a relay program in between: only
/// root may. The server's `SO_PEERCRED` names that user, and the caller
/// reads and writes the returned descriptor directly. For tests and the
/// fuzzer, which speak as several users at once.
public func connectUnixSocket(_ path: String, as user: String) throws(SystemError) -> Int32 {
  let ids: (uid_t, gid_t)
  if let entry = userIDs(user) {
    ids = entry
  } else if let number = UInt32(user) {
    ids = (number, number)
  } else {
    throw SystemError("connect", errno: ENOENT, subject: "\(path) as \(user)")
  }
  let fd = chat_connect_as(path, ids.0, ids.1)
  guard fd >= 0 else { throw SystemError("connect", subject: "\(path) as \(user)") }
  return fd
}

/// The uid and primary gid of the login name `user`, nil when there is no
/// such user. Through getpwnam_r(3): getpwnam(3)'s one static entry is
/// shared by every thread, so the fuzzer's clients, which connect as
/// several users at once, could read another user's uid from it and speak
/// as that user (chatfuzz once saw cbtest1's words arrive as cbtest2's).
public func userIDs(_ user: String) -> (uid: uid_t, gid: gid_t)? {
  var entry = passwd()
  var result: UnsafeMutablePointer<passwd>?
  var buffer = [CChar](repeating: 0, count: 4096)
  guard getpwnam_r(user, &entry, &buffer, buffer.count, &result) == 0, result != nil else {
    return nil
  }
  return (entry.pw_uid, entry.pw_gid)
}
