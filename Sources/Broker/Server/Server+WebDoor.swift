import Glibc
import LineProtocol

/// The browser door's part of the shell (chatbroker(8), "The web door"):
/// who is refused as they connect, how many connections of one user may
/// wait to show a token and for how long, and the token's way to the
/// engine. The rest is the door's codec (``WebWire``) and the engine's
/// (Engine+WebDoor).
extension Server {
  /// Connections of one user that have yet to show a token, at most; more
  /// are refused as they come, so that a page hammering the door (any
  /// page the user's browser shows may) holds a few descriptors only.
  static let awaitingAdmissionPerUser = 16
  /// From its accept, a connection has this long to send its request and,
  /// for the WebSocket, its token; then it is closed (a slow request head
  /// holds nothing for long).
  static let admissionMilliseconds = 10_000

  /// Why a connection of `uid` is refused at the browser door, or nil:
  /// root's and the broker's own user's are (the kernel names root for a
  /// socket it no longer knows the owner of, and the broker's user would
  /// be any service that shares it; neither is a person with a browser),
  /// and those of a user with ``awaitingAdmissionPerUser`` waiting.
  func webDoorRefusal(uid: uid_t, user: String) -> String? {
    if uid == 0 { return "the web door serves no connection of root" }
    if uid == geteuid() { return "the web door serves no connection of the broker's own user" }
    if awaitingAdmission[user, default: 0] >= Self.awaitingAdmissionPerUser {
      return
        "\(user) has \(Self.awaitingAdmissionPerUser) web connections waiting for a token already"
    }
    return nil
  }

  /// Refuses a browser's connection before reading it: logged, told why
  /// in a short HTTP answer (what a person who opened the address reads),
  /// closed.
  func refuseAtWebDoor(_ fd: Int32, user: String, reason: String) {
    logConnection(
      .warning, "connection refused", user: user,
      [("user", user), ("wire", WireFormat.web.logName), ("reason", reason)])
    let answer = HTTPResponse.refusal(status: 403, reason: reason)
    _ = answer.withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }
    Glibc.close(fd)
  }

  /// A browser's connection is open but no session: counted, and given
  /// ``admissionMilliseconds`` to become one.
  func awaitAdmission(_ connection: Connection) {
    connection.awaitingAdmission = true
    awaitingAdmission[connection.user, default: 0] += 1
    let id = connection.id
    poll.after(milliseconds: Self.admissionMilliseconds) { [unowned self] in
      guard let connection = connections[id], connection.awaitingAdmission, !connection.closing
      else { return }
      logConnection(
        .warning, "web request refused", user: connection.user,
        [
          ("conn", "\(id)"), ("user", connection.user),
          ("reason", "no request, or no token, within \(Self.admissionMilliseconds / 1000) s"),
        ])
      endAdmission(connection)
      close(id)
    }
  }

  /// It showed a token: the engine greets it, or refuses it and closes it.
  func admit(_ connection: Connection, webToken token: String) {
    endAdmission(connection)
    if let reason = engine.admit(connection.id, user: connection.user, webToken: token) {
      logConnection(
        .warning, "web token refused", user: connection.user,
        [("conn", "\(connection.id)"), ("user", connection.user), ("reason", reason)])
    }
    onStatusChange?()
  }

  /// No longer waiting (admitted, refused or gone).
  func endAdmission(_ connection: Connection) {
    guard connection.awaitingAdmission else { return }
    connection.awaitingAdmission = false
    let user = connection.user
    awaitingAdmission[user, default: 1] -= 1
    if awaitingAdmission[user] == 0 { awaitingAdmission[user] = nil }
  }
}
