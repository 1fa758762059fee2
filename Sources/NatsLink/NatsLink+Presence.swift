import Broker
import CNats
import Foundation
import LineProtocol

/// Who is in each shared room on each host (chatbroker(8), "FEDERATION",
/// "Presence"): plain NATS messages outside the stream, on
/// `chatpresence.<room>.<node>`, each naming a host's members of one room
/// (`#ops alice bob`, an empty list once none is left). Announced on every
/// change and again every ``Engine/presenceInterval``; never stored, since
/// presence is what is true now.
extension NatsLink {
  public func announce(_ room: RoomName, users: [String]) {
    announcedLock.lock()
    announced[room] = users.isEmpty ? nil : users
    announcedLock.unlock()
    send(room, users: users)
  }

  private func send(_ room: RoomName, users: [String]) {
    guard let connection else { return }
    let payload = ([room.description] + users).joined(separator: " ")
    let subject = FederationSubjects.presence(for: room, node: configuration.node)
    // Lost while disconnected: the next announcement says it again.
    _ = natsConnection_PublishString(connection, subject, payload)
  }

  /// Announces every room with members here again, every interval.
  func presenceLoop() {
    while true {
      nats_Sleep(Engine.presenceInterval)
      announcedLock.lock()
      let rooms = announced
      announcedLock.unlock()
      for (room, users) in rooms.sorted(by: { $0.key < $1.key }) { send(room, users: users) }
    }
  }

  /// Reads every host's announcements; libnats subscribes again after a
  /// reconnection by itself.
  func subscribePresence() {
    guard let connection else { return }
    var subscription: OpaquePointer?
    let context = Unmanaged.passUnretained(self).toOpaque()
    let status = natsConnection_Subscribe(
      &subscription, connection, "chatpresence.>",
      { _, _, message, closure in
        defer { natsMsg_Destroy(message) }
        guard let closure, let message else { return }
        let link = Unmanaged<NatsLink>.fromOpaque(closure).takeUnretainedValue()
        guard let (room, node, users) = NatsLink.announcement(message) else { return }
        link.presence(room, node, users)
      }, context)
    if status != NATS_OK {
      report(
        "cannot read other hosts' presence",
        ["reason": NatsError(status, "natsConnection_Subscribe chatpresence.>").description])
    }
  }

  /// An announcement as (room, node, users), or nil when it is not one
  /// (``FederationSubjects/announcement(subject:payload:)``).
  static func announcement(_ message: OpaquePointer) -> (RoomName, String, [String])? {
    guard let subject = natsMsg_GetSubject(message), let data = natsMsg_GetData(message) else {
      return nil
    }
    let payload = UnsafeRawBufferPointer(start: data, count: Int(natsMsg_GetDataLength(message)))
    guard
      let (room, node, users) = FederationSubjects.announcement(
        subject: String(cString: subject), payload: payload)
    else { return nil }
    return (room, node, users)
  }
}
