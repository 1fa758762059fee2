/// The server's open connections, by id. Each id the table hands out
/// carries the slot its connection sits in, so a lookup is an array index
/// and a compare: `Server.send` looks up every recipient of a fan-out, and
/// hashing each id cost more than the rest of the lookup (measured with
/// `perf record` under `chatbench fanout`). Slots of closed connections are
/// reused; ids never are, so a stale id finds nothing.
struct ConnectionTable {
  private var slots: [Connection?] = []
  private var freeSlots: [Int] = []
  private(set) var count = 0

  var isEmpty: Bool { count == 0 }

  /// A new id, numbered `value`, with a slot of its own for the
  /// connection stored under it next.
  mutating func makeID(_ value: Int) -> ConnectionID {
    if let slot = freeSlots.popLast() { return ConnectionID(value, slot: slot) }
    slots.append(nil)
    return ConnectionID(value, slot: slots.count - 1)
  }

  /// Frees the slot of an id from ``makeID(_:)`` that nothing was stored
  /// under (the connection could not be opened).
  mutating func abandon(_ id: ConnectionID) {
    precondition(slots[Int(id.slot)] == nil, "only an id nothing is stored under is abandoned")
    freeSlots.append(Int(id.slot))
  }

  /// The connection with `id`, if it is still open; storing one needs an
  /// id from ``makeID(_:)``, storing `nil` frees its slot.
  subscript(id: ConnectionID) -> Connection? {
    get {
      let slot = Int(id.slot)
      guard slot >= 0, slot < slots.count, let connection = slots[slot],
        connection.id.value == id.value
      else { return nil }
      return connection
    }
    set {
      if let newValue {
        precondition(id.slot >= 0, "a connection is stored under an id from makeID")
        if slots[Int(id.slot)] == nil { count += 1 }
        slots[Int(id.slot)] = newValue
      } else {
        removeValue(forKey: id)
      }
    }
  }

  /// The connection a ``ReadinessPoll`` event is for, if still open.
  subscript(pollToken token: UInt64) -> Connection? {
    let slot = Int(UInt32(truncatingIfNeeded: token))
    guard slot < slots.count, let connection = slots[slot], connection.id.pollToken == token
    else { return nil }
    return connection
  }

  /// Every open connection, in no order.
  var all: [Connection] { slots.compactMap { $0 } }

  /// Removes and returns the connection with `id`, freeing its slot.
  @discardableResult
  mutating func removeValue(forKey id: ConnectionID) -> Connection? {
    guard let connection = self[id] else { return nil }
    slots[Int(id.slot)] = nil
    freeSlots.append(Int(id.slot))
    count -= 1
    return connection
  }
}
