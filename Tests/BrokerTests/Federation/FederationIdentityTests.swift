import Foundation
import Glibc
import TestSupport
import Testing

/// A line is known by its node and id, and a node never reuses its ids
/// (chatbroker(8), "FEDERATION"): what a hostile payload or a lost state
/// directory must not do to acknowledged lines, on a real cluster.
@Suite(
  "Federation: exactly once by identity", .serialized,
  .enabled(if: NatsCluster.server != nil))
struct FederationIdentityTests {
  typealias Hosts = FederationTests

  /// Deletes the stream and creates it anew, as an operator who lost it
  /// would: same name and subjects, a new creation time.
  static func recreateStream(_ cluster: NatsCluster) throws {
    let admin = try cluster.client(0, as: "admin")
    let deleted = try admin.jetStream("$JS.API.STREAM.DELETE.CHAT")
    #expect(deleted.contains("\"success\":true"), "\(deleted)")
    let created = try admin.jetStream(
      "$JS.API.STREAM.CREATE.CHAT",
      #"{"name":"CHAT","subjects":["chat.>"],"storage":"file","num_replicas":3,"duplicate_window":120000000000,"allow_direct":true}"#
    )
    #expect(!created.contains("\"error\""), "\(created)")
  }

  @Test(
    "a forged payload under h2's subject, with a high id, does not silence h2's later lines (real time)"
  )
  func forgedPayloadRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let hosts = try [Hosts.broker(1, cluster), Hosts.broker(2, cluster)]
    try Hosts.diagnosed(cluster, hosts) {
      let clients = try Hosts.clientsOnceCaughtUp(hosts)
      _ = try clients[1].request("SAY #ops :before")
      try Hosts.waitForHistory(clients[0], count: 1)
      // Someone holding h2's credentials publishes id `zz` (1295), far
      // above h2's counter; and a line naming another node's user.
      let raw = try cluster.client(1, as: "h2")
      for (id, author) in [("zz", "mallory"), ("2", "root@h1")] {
        try raw.publish(
          "chat.room.ops.h2",
          ##"{"type":"outbox","id":"\##(id)","node":"h2","to":"#ops","from":"\##(author)","at":"2026-11-30T17:00:00.000Z","text":"forged \##(id)"}"##
        )
      }
      try Hosts.waitForHistory(clients[0], count: 2)
      for text in ["after 1", "after 2"] {
        #expect(try clients[1].request("SAY #ops :\(text)").last?.hasPrefix("OK SAY ") == true)
      }
      let expected = ["before", "forged zz", "after 1", "after 2"]
      for client in clients {
        try Hosts.waitForHistory(client, count: 4)
        #expect(try Hosts.texts(client) == expected)
      }
      let authors = try Hosts.history(clients[0]).map(\.author)
      #expect(authors == ["root@h2", "mallory@h2", "root@h2", "root@h2"])
    }
  }

  @Test(
    "h3's credentials publish, under h3's own subject, lines with the de-duplication ids h2 will give its next lines: h2's acknowledged lines still reach h1, h3 and h2's other session (real time)"
  )
  func forgedDeduplicationIDsRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let hosts = try (1...3).map { try Hosts.broker($0, cluster) }
    try Hosts.diagnosed(cluster, hosts) {
      let clients = try Hosts.clientsOnceCaughtUp(hosts)
      // Only root's other session on h2 is in #ops, to get the lines as
      // MSG; the others read HISTORY, which no MSG line interrupts.
      let otherSession = try hosts[1].connect()
      _ = try otherSession.request("JOIN #ops")
      // All h3's permissions allow (chatbroker(8), "A worked example"):
      // its own subject, payloads naming h2 (ignored by every host), and
      // `Nats-Msg-Id`s a hostile host could predict, stored by the stream.
      let h3 = try cluster.client(2, as: "h3")
      for id in 1...40 {
        let acknowledged = try h3.request(
          "chat.room.ops.h3",
          ##"{"type":"outbox","id":"\##(id)","node":"h2","to":"#ops","from":"root","at":"2026-11-30T17:00:00.000Z","text":"forged \##(id)"}"##,
          headers: [("Nats-Msg-Id", "h2:\(id)")], timeout: 5)
        #expect(acknowledged.contains(#""seq":"#), "\(acknowledged)")
      }
      let said = ["one", "two", "three"]
      for text in said {
        #expect(try clients[1].request("SAY #ops :\(text)").last?.hasPrefix("OK SAY ") == true)
      }
      // A line takes well under a second to reach every host.
      for client in [clients[0], clients[2]] {
        try Hosts.waitForHistory(client, count: said.count, timeout: 10)
        let shown = try Hosts.history(client)
        #expect(shown.map(\.text) == said, "\(shown)")
        #expect(shown.allSatisfy { $0.author == "root@h2" }, "\(shown)")
      }
      for text in said {
        #expect(try otherSession.expect("MSG #ops ", timeout: 10).hasSuffix(" root :\(text)"))
      }
    }
  }

  @Test(
    "h2 restarted on an empty state directory under the same --node: its new lines reach h1, none is taken for an old one (real time)"
  )
  func emptyStateDirectoryRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let first = try Hosts.broker(1, cluster)
    var second = try Hosts.broker(2, cluster)
    try Hosts.diagnosed(cluster, [first, second]) {
      for host in [first, second] { try host.waitForLog("federation link caught up", timeout: 20) }
      let reader = try first.connect()
      let writer = try second.connect()
      for index in 1...3 { _ = try writer.request("SAY #ops :old \(index)") }
      try Hosts.waitForHistory(reader, count: 3)
      _ = try second.stop()
    }
    second = try Hosts.broker(2, cluster)
    try Hosts.diagnosed(cluster, [first, second]) {
      try second.waitForLog("found this node's last id in the stream", timeout: 20)
      #expect(second.log.contains("last_id=3"))
      let writer = try second.connect()
      var ids: [String] = []
      for index in 1...3 {
        let reply = try writer.request("SAY #ops :new \(index)")
        #expect(reply.last?.hasPrefix("OK SAY ") == true)
        ids.append(String(reply.last!.split(separator: " ")[2]))
      }
      #expect(ids == ["4", "5", "6"], "ids continue after the stream's")
      let reader = try first.connect()
      try Hosts.waitForHistory(reader, count: 6)
      let texts = ["old 1", "old 2", "old 3", "new 1", "new 2", "new 3"]
      #expect(try Hosts.texts(reader) == texts)
      try Hosts.waitForHistory(writer, count: 6)
      #expect(try Hosts.texts(writer) == texts)
    }
  }

  @Test(
    "a host that was down when the stream was lost and created anew still gets the lines it had not read, and no host shows one twice (real time)"
  )
  func missedLinesPublishedAgainRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let writer = try Hosts.broker(1, cluster)
    let reader = try Hosts.broker(3, cluster)
    try Hosts.diagnosed(cluster, [writer, reader]) {
      for host in [writer, reader] {
        try host.waitForLog("federation link caught up", timeout: 20)
      }
      let alice = try writer.connect()
      _ = try alice.request("SAY #ops :read by both")
      try Hosts.waitForHistory(try reader.connect(), count: 1)
      _ = try reader.stop()
      for text in ["missed 1", "missed 2"] { _ = try alice.request("SAY #ops :\(text)") }
      try Hosts.waitForHistory(alice, count: 3)
      try Self.recreateStream(cluster)
      try writer.waitForLog("federation link publishes this node's latest lines again", timeout: 30)
      _ = try alice.request("SAY #ops :after")
      let expected = ["read by both", "missed 1", "missed 2", "after"]
      try Hosts.waitForHistory(alice, count: 4, timeout: 30)
      try reader.start(Hosts.arguments(3, cluster))
      let bob = try reader.connect()
      try reader.waitForLog("the stream was lost or reset", timeout: 30)
      try Hosts.waitForHistory(bob, count: 4, timeout: 30)
      // A last line comes after every other in the new stream: once it is
      // shown, a line shown twice would be too.
      _ = try alice.request("SAY #ops :last")
      try Hosts.waitForHistory(bob, count: 5, timeout: 30)
      try Hosts.waitForHistory(alice, count: 5, timeout: 30)
      #expect(try Hosts.texts(bob) == expected + ["last"])
      #expect(
        try Hosts.texts(alice) == expected + ["last"], "the writer shows none of its lines twice")
      let ids = try Hosts.history(bob).map(\.id)
      #expect(Set(ids).count == 5)
    }
  }

  @Test(
    "the stream deleted and created anew: every host reads the new one from its start, and lines said after it are shown everywhere once, with new ids (real time)"
  )
  func streamResetRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let hosts = try (1...3).map { try Hosts.broker($0, cluster) }
    try Hosts.diagnosed(cluster, hosts) {
      let clients = try Hosts.clientsOnceCaughtUp(hosts)
      for (index, client) in clients.enumerated() {
        _ = try client.request("SAY #ops :old \(index + 1)")
      }
      for client in clients { try Hosts.waitForHistory(client, count: 3) }
      try Self.recreateStream(cluster)
      for host in hosts {
        try host.waitForLog("the stream was lost or reset", timeout: 30)
      }
      for (index, client) in clients.enumerated() {
        #expect(
          try client.request("SAY #ops :new \(index + 1)").last?.hasPrefix("OK SAY ") == true)
      }
      for client in clients { try Hosts.waitForHistory(client, count: 6, timeout: 30) }
      let histories = try clients.map { try Hosts.history($0) }
      for history in histories {
        #expect(history.map(\.id) == histories[0].map(\.id))
        #expect(Set(history.map(\.id)).count == 6, "no id is given twice")
        #expect(Set(history.map(\.text).suffix(3)) == ["new 1", "new 2", "new 3"])
      }
    }
  }

  @Test(
    "the sending broker killed with SIGKILL during a pipelined burst: after its restart every acknowledged line is on the other host once, in order (real time)"
  )
  func killDuringBurstRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let sender = try Hosts.broker(1, cluster, sync: true)
    let receiver = try Hosts.broker(3, cluster)
    try Hosts.diagnosed(cluster, [sender, receiver]) {
      for host in [sender, receiver] {
        try host.waitForLog("federation link caught up", timeout: 20)
      }
      let client = try sender.connect()
      let total = 800
      try client.send((1...total).map { "SAY #ops :line \($0)\n" }.joined())
      // OK SAY comes in request order: the first `acknowledged` lines were.
      var acknowledged = 0
      while acknowledged < 300, let line = try client.readLine(timeout: 20) {
        if line.hasPrefix("OK SAY ") { acknowledged += 1 }
      }
      try sender.restart(crash: true, timeout: 20)
      let watcher = try receiver.connect()
      try Hosts.waitForHistory(watcher, count: acknowledged, timeout: 60)
      // What the burst stored before the kill, and what the outbox
      // published after the restart: nothing twice, nothing out of order.
      try sender.waitForLog("federation link caught up", timeout: 20)
      usleep(500_000)
      let texts = try Hosts.texts(watcher)
      let numbers = texts.compactMap { Int($0.dropFirst("line ".count)) }
      #expect(numbers.count == texts.count)
      #expect(numbers == Array(1...numbers.count), "every line once, in order")
      #expect(numbers.count >= acknowledged)
    }
  }

  /// Hosts 1 and 2 on a cluster, `first` said on host 1 and shown on
  /// host 2; then, with host 2 frozen and its pull request expired, the
  /// line `taken` said on host 1 and delivered by host 2's consumer to the
  /// administrator instead, as a delivery lost on a frozen server's route
  /// would be. `body` runs once host 2 goes on, with both hosts' clients.
  static func withDeliveryTaken(
    _ body: (_ hosts: [BrokerProcess], _ clients: [LineClient]) throws -> Void
  ) throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let hosts = try [Hosts.broker(1, cluster), Hosts.broker(2, cluster)]
    try Hosts.diagnosed(cluster, hosts) {
      let clients = try Hosts.clientsOnceCaughtUp(hosts)
      _ = try clients[0].request("SAY #ops :first")
      try Hosts.waitForHistory(clients[1], count: 1)
      let admin = try cluster.client(0, as: "admin")
      hosts[1].process?.signal(SIGSTOP)
      try waitUntil(timeout: 10, "host 2's pull request to expire") {
        let info = try admin.request("$JS.API.CONSUMER.INFO.CHAT.h2", timeout: 5)
        return info.contains(#""num_waiting":0"#)
      }
      _ = try clients[0].request("SAY #ops :taken")
      // A status (`NATS/1.0 408 ...`) instead of a message is asked
      // again, at most three times.
      var answers: [String] = []
      for _ in 1...3 {
        let answer = try admin.request(
          "$JS.API.CONSUMER.MSG.NEXT.CHAT.h2", #"{"batch":1,"expires":5000000000}"#, timeout: 10)
        answers.append(answer)
        if !answer.hasPrefix("NATS/1.0") { break }
      }
      #expect(answers.last?.contains(#""text":"taken""#) == true, "\(answers)")
      hosts[1].process?.signal(SIGCONT)
      try body(hosts, clients)
    }
  }

  @Test(
    "a delivery of a host's consumer that never reaches its broker (taken by another reader) is read again: the host shows every line (real time)"
  )
  func lostDeliveryRealTime() throws {
    try Self.withDeliveryTaken { hosts, clients in
      _ = try clients[0].request("SAY #ops :after")
      // The delivery after the taken one acknowledges it too: host 2
      // must notice the gap and read the taken line again.
      try Hosts.waitForHistory(clients[1], count: 3, timeout: 20)
      #expect(try Hosts.texts(clients[1]) == ["first", "taken", "after"])
      #expect(try Hosts.history(clients[1]).map(\.id) == Hosts.history(clients[0]).map(\.id))
      try hosts[1].waitForLog("lost a delivery of the stream", timeout: 5)
    }
  }

  @Test(
    "the last delivery lost, with none after it: the host notices while idle and reads it again (real time)"
  )
  func lostLastDeliveryRealTime() throws {
    try Self.withDeliveryTaken { hosts, clients in
      // Well before the consumer would deliver it again (30 s).
      try Hosts.waitForHistory(clients[1], count: 2, timeout: 15)
      #expect(try Hosts.texts(clients[1]) == ["first", "taken"])
      try hosts[1].waitForLog("lost deliveries of the stream", timeout: 5)
    }
  }

  @Test(
    "the stream's leader stopped (SIGSTOP) for ten seconds while h1, h2 and h3 post: every acknowledged line is on every host once, with the same ids in the same order (real time)"
  )
  func stoppedLeaderRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let hosts = try (1...3).map { try Hosts.broker($0, cluster) }
    try Hosts.diagnosed(cluster, hosts) {
      let clients = try Hosts.clientsOnceCaughtUp(hosts)
      _ = try clients[0].request("SAY #ops :start")
      for client in clients { try Hosts.waitForHistory(client, count: 1) }
      let leader = try cluster.streamLeader()
      // Each host posts one line every 250 ms without waiting for its
      // answer, through the stop and a little after it.
      let perHost = 60
      var stopped = false
      for number in 1...perHost {
        if number == 5 {
          cluster.signal(leader, SIGSTOP)
          stopped = true
        }
        if number == 45 {
          cluster.signal(leader, SIGCONT)
          stopped = false
        }
        for (index, client) in clients.enumerated() {
          try client.send("SAY #ops :h\(index + 1) \(number)\n")
        }
        usleep(250_000)
      }
      if stopped { cluster.signal(leader, SIGCONT) }
      // One answer per SAY, in order: the lines answered OK SAY are the
      // acknowledged ones.
      var acknowledged: [String] = ["start"]
      for (index, client) in clients.enumerated() {
        var number = 0
        while number < perHost {
          let line = try client.expect("", timeout: 60)
          guard line.hasPrefix("OK SAY ") || line.hasPrefix("ERR SAY ") else { continue }
          number += 1
          if line.hasPrefix("OK SAY ") { acknowledged.append("h\(index + 1) \(number)") }
        }
      }
      #expect(acknowledged.count > 2 * perHost, "most lines are acknowledged")
      for client in clients {
        try Hosts.waitForHistory(client, count: acknowledged.count, timeout: 90)
      }
      // A line shown twice would come after every acknowledged one: a
      // last line, once shown everywhere, makes it visible.
      _ = try clients[2].request("SAY #ops :end")
      for client in clients {
        try Hosts.waitForHistory(client, count: acknowledged.count + 1, timeout: 30)
      }
      let histories = try clients.map { try Hosts.history($0) }
      for history in histories {
        #expect(history.map(\.id) == histories[0].map(\.id), "the same ids in the same order")
        #expect(history.map(\.text) == histories[0].map(\.text))
        #expect(history.count == acknowledged.count + 1, "no line twice")
        #expect(Set(history.map(\.text)) == Set(acknowledged + ["end"]), "every acknowledged line")
      }
    }
  }
}
