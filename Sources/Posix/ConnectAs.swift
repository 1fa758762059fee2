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
  if let entry = getpwnam(user) {
    ids = (entry.pointee.pw_uid, entry.pointee.pw_gid)
  } else if let number = UInt32(user) {
    ids = (number, number)
  } else {
    throw SystemError("connect", errno: ENOENT, subject: "\(path) as \(user)")
  }
  let fd = chat_connect_as(path, ids.0, ids.1)
  guard fd >= 0 else { throw SystemError("connect", subject: "\(path) as \(user)") }
  return fd
}
