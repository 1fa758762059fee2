import CShims
import Glibc

/// Connects to the Unix stream socket at `path` as the Unix user `user`, a
/// login name or a bare uid (with the same number as its group, as
/// `setpriv --reuid` takes it), without a relay program in between: only
/// root may. The server's `SO_PEERCRED` names that user, and the caller
/// reads and writes the returned descriptor directly. For tests and the
/// fuzzer, which speak as several users at once.
public func connectUnixSocket(_ path: String, as user: String) throws(SystemError) -> Int32 {
  let ids = try connectingIDs(user, subject: "\(path) as \(user)")
  let fd = chat_connect_as(path, ids.uid, ids.gid)
  guard fd >= 0 else { throw SystemError("connect", subject: "\(path) as \(user)") }
  return fd
}

/// A blocking TCP connection to 127.0.0.1 (or, with `family` AF_INET6,
/// ::1) on `port`, whose socket the Unix user `user` made (a login name or
/// a bare uid, as ``connectUnixSocket(_:as:)`` takes it), so that the
/// kernel names that user as its owner (sock_diag): how the tests and the
/// fuzzer reach the loopback doors (chatbroker(8), `--irc-listen`,
/// `--web-listen`) as other users. Root only.
public func connectLoopback(
  port: UInt16, family: Int32 = AF_INET, as user: String
) throws(SystemError) -> Int32 {
  let subject = "port \(port) as \(user)"
  let ids = try connectingIDs(user, subject: subject)
  let fd = chat_connect_loopback_as(family, port, ids.uid, ids.gid)
  guard fd >= 0 else { throw SystemError("connect", subject: subject) }
  return fd
}

/// The uid and gid a connection as `user` is made with.
private func connectingIDs(_ user: String, subject: String) throws(SystemError) -> (
  uid: uid_t, gid: gid_t
) {
  if let entry = userIDs(user) { return entry }
  if let number = UInt32(user) { return (number, number) }
  throw SystemError("connect", errno: ENOENT, subject: subject)
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
