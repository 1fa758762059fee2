import Broker
import Dispatch
import Foundation
import Glibc
import Posix
import ProtocolFuzz
import TestSupport
import Testing

/// The web door through a failed journal sync (chatbroker(7), "Order and
/// durability"): a page's replies that waited for the sync are answered
/// again or refused `STORAGE`, each in its place, and all before the
/// socket's close frame, even when they are made after it was queued.
@Suite("The web door through a failed journal sync", .serialized, UnixUsers.required)
struct WebDoorSyncFailureTests {
  @Test(
    "a page that half-closed while its replies waited for a failed sync gets one reply per request, in order, then the close frame"
  )
  func halfClosedPageDuringFailedSync() throws {
    try UnixUsers.ensure()
    let directory = try makeShortTemporaryDirectory("cb-wsync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    #expect(chmod(directory, 0o755) == 0)
    let disk = FlakyDisk()
    let journal = try FileJournal(directory: directory + "/state")
    let clock = SystemClock()
    _ = try journal.load(repair: false, now: clock.now) { _ in }
    let committer = JournalCommitter(journal: journal, synchronize: { disk.synchronize($0) })
    let engine = Engine(clock: clock, users: SystemUsers(), journal: committer)
    let queue = DispatchQueue(label: "web-sync-failure-test")
    let server = try Server(
      queue: queue, engine: engine, committer: committer, users: SystemUsers(),
      options: Server.Options(), log: Logger(sink: nil))
    let port = try LoopbackSocket.freePort()
    let endpoint = try #require(LoopbackTCP.parse("127.0.0.1:\(port)"))
    let socket = try UnixSocket.bind(path: directory + "/sock", mode: 0o666)
    let door = try LoopbackTCP.listen(on: endpoint)
    try queue.sync {
      try server.listen(on: socket)
      try server.listen(on: door, wire: .web)
      engine.webDoorPort = port
      engine.finishReplay()
    }
    let sessions = { queue.sync { engine.connectionCount } }
    // The token, as chatsh web gets it.
    let shell = LineClient(fd: try connectUnixSocket(directory + "/sock", as: "cbtest1"))
    _ = try shell.expect("HELLO ")
    let token = try #require(
      try shell.request("WEB").last?.split(separator: " ").dropFirst(2).first)
    let writer = LineClient(fd: try connectUnixSocket(directory + "/sock", as: "cbtest2"))
    _ = try writer.expect("HELLO ")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: String(token))
    #expect(sessions() == 3)
    // A slow sync first, so that the next one runs on the sync thread.
    disk.slowness = 20
    #expect(try writer.request("SAY #a slow").last?.hasPrefix("OK SAY ") == true)
    disk.slowness = 0
    disk.fails = true
    disk.hold()
    try writer.send("SAY #a x\n")
    try disk.waitForHangingSync()
    // Each reply waits for "x"; the page is gone from the engine before
    // the sync fails, so these can no longer be answered again.
    try page.send(
      WebSocketFrames.text("CANCEL 1z") + WebSocketFrames.text("HISTORY #a 5 BEFORE 1")
        + WebSocketFrames.text("PING end"))
    shutdown(page.fd, Int32(SHUT_WR))
    try waitUntil(timeout: 5, "the page's session to end") { sessions() == 2 }
    disk.release()
    let (code, _, texts) = try page.expectClose()
    #expect(texts.count == 3, "\(texts)")
    #expect(texts.first?.hasPrefix("ERR CANCEL STORAGE ") == true, "\(texts)")
    #expect(texts.dropFirst().first?.hasPrefix("ERR HISTORY STORAGE ") == true, "\(texts)")
    #expect(texts.last == "OK PING end")
    #expect(code == 1000)
  }
}
