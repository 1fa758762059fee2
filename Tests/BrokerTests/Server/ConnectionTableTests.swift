import Dispatch
import Glibc
import Testing

@testable import Broker

@Suite("The server's table of open connections")
struct ConnectionTableTests {
  @Test("a closed connection's id finds nothing, even once a newer connection took its place")
  func staleIDFindsNothing() throws {
    let sockets = try Sockets()
    var table = ConnectionTable()
    let first = table.makeID(1)
    let second = table.makeID(2)
    let opened = [try sockets.connection(first), try sockets.connection(second)]
    table[first] = opened[0]
    table[second] = opened[1]
    #expect(table.count == 2)
    #expect(table[first] === opened[0] && table[second] === opened[1])

    #expect(table.removeValue(forKey: first) === opened[0])
    let third = table.makeID(3)
    let newer = try sockets.connection(third)
    table[third] = newer
    #expect(table[first] == nil, "the newer connection took the slot, not the id")
    #expect(table[pollToken: first.pollToken] == nil, "nor does an event still pending for it")
    #expect(table[third] === newer && table[pollToken: third.pollToken] === newer)
    #expect(table[ConnectionID(3)] == nil, "an id the table did not hand out finds nothing")
    #expect(table.count == 2)
    table[second] = nil
    table[third] = nil
    #expect(table.isEmpty)
  }

  @Test("an id nothing was stored under gives its slot back")
  func abandonedIDFreesItsSlot() {
    var table = ConnectionTable()
    let refused = table.makeID(1)
    table.abandon(refused)
    let next = table.makeID(2)
    #expect(next.slot == refused.slot)
    #expect(table.isEmpty)
  }

  /// Connections over socket pairs of their own, registered with one poll;
  /// every descriptor is closed when the test ends.
  private final class Sockets {
    let poll: ReadinessPoll
    var connections: [Connection] = []
    var peers: [Int32] = []

    init() throws {
      poll = try ReadinessPoll(queue: DispatchQueue(label: "connection-table-test"))
      poll.start(ReadinessPoll.Handlers(timerFired: {}, ready: { _ in }, endOfPass: {}))
    }

    func connection(_ id: ConnectionID) throws -> Connection {
      var pair: [Int32] = [-1, -1]
      #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
      peers.append(pair[1])
      let connection = try Connection(
        id: id, fd: pair[0], user: "alice", codec: LineWire(maximumLineBytes: 4096), poll: poll)
      connections.append(connection)
      return connection
    }

    deinit {
      for connection in connections { connection.closeDescriptor() }
      for fd in peers { close(fd) }
    }
  }
}
