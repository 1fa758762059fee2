import Dispatch
import Glibc
import Testing

@testable import Broker

@Suite("The server's table of open connections")
struct ConnectionTableTests {
  @Test("a closed connection's id finds nothing, even once a newer connection took its place")
  func staleIDFindsNothing() throws {
    var pair: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    defer { for fd in pair { close(fd) } }
    let queue = DispatchQueue(label: "connection-table-test")
    var table = ConnectionTable()
    func connection(_ id: ConnectionID) -> Connection {
      Connection(id: id, fd: pair[0], user: "alice", maximumLineBytes: 4096, queue: queue)
    }
    let first = table.makeID(1)
    let second = table.makeID(2)
    let opened = [connection(first), connection(second)]
    table[first] = opened[0]
    table[second] = opened[1]
    #expect(table.count == 2)
    #expect(table[first] === opened[0] && table[second] === opened[1])

    #expect(table.removeValue(forKey: first) === opened[0])
    let third = table.makeID(3)
    let newer = connection(third)
    table[third] = newer
    #expect(table[first] == nil, "the newer connection took the slot, not the id")
    #expect(table[third] === newer)
    #expect(table[ConnectionID(3)] == nil, "an id the table did not hand out finds nothing")
    #expect(table.count == 2)
    table[second] = nil
    table[third] = nil
    #expect(table.isEmpty)
    for connection in opened + [newer] { connection.cancelSources() }
  }
}
