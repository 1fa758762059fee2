import Foundation
import Glibc
import TestSupport
import Testing

/// A direct message between two hosts is theirs alone (chatbroker(8),
/// "FEDERATION"): with the permissions of the man page's example, a third
/// host's credentials cannot read it by any means NATS offers, while
/// shared rooms stay readable by every host.
@Suite(
  "Federation: direct messages private to their two hosts", .serialized,
  .enabled(if: NatsCluster.server != nil))
struct FederationPrivacyTests {
  typealias Hosts = FederationTests

  /// A request that h3's permissions must refuse: the server answers
  /// `-ERR 'Permissions Violation for Publish to ...'` and drops it.
  static func expectRefused(
    _ raw: RawNats, _ subject: String, _ payload: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let (errors, answered) = try raw.attempt(subject, payload)
    #expect(!answered, "h3 was answered on \(subject)", sourceLocation: sourceLocation)
    #expect(
      errors == ["-ERR 'Permissions Violation for Publish to \"\(subject)\"'"], "\(errors)",
      sourceLocation: sourceLocation)
  }

  @Test(
    "h3 cannot read a direct message between h1 and h2: not by subscribing, by a consumer of any filter, by MSG.GET or DIRECT.GET, nor through its broker; a shared room reaches all three (real time)"
  )
  func directMessagePrivateRealTime() throws {
    // The operator creates the stream: a node that could create it could
    // give it a configuration that copies every line to a subject it reads.
    let cluster = try NatsCluster(nodesCreateStream: false)
    try cluster.start()
    let created = try cluster.client(0, as: "admin").jetStream(
      "$JS.API.STREAM.CREATE.CHAT",
      #"{"name":"CHAT","subjects":["chat.>"],"storage":"file","num_replicas":3,"duplicate_window":120000000000,"allow_direct":true}"#
    )
    #expect(!created.contains("\"error\""), "\(created)")
    let hosts = try (1...3).map { try Hosts.broker($0, cluster) }
    try Hosts.diagnosed(cluster, hosts) {
      let clients = try Hosts.clientsOnceCaughtUp(hosts)
      #expect(
        try clients[0].request("SAY @root@h2 :secret between h1 and h2").last?.hasPrefix(
          "OK SAY ") == true)
      let received = try clients[1].expect("MSG @root@h1 ", timeout: 20)
      #expect(received.hasSuffix(" root@h1 :secret between h1 and h2"))
      _ = try clients[1].request("SAY @root@h1 :reply between h2 and h1")
      try clients[0].expect("MSG @root@h2 ", timeout: 20)
      // A shared room's line after them: once h3 shows it, h3 has read
      // everything the stream holds that it may read.
      _ = try clients[0].request("SAY #ops :for everyone")
      for client in clients { try Hosts.waitForHistory(client, count: 1) }
      let dm = "chat.dm.h1.h2.h1"
      // The line is in the stream, as the operator sees it.
      let stored = try cluster.client(0, as: "admin").jetStream(
        "$JS.API.STREAM.MSG.GET.CHAT", #"{"last_by_subj":"\#(dm)"}"#)
      #expect(stored.contains("\"subject\":\"\(dm)\""), "\(stored)")

      let h3 = try cluster.client(2, as: "h3")
      // Core subscriptions: to the subjects, to every subject, to the
      // inboxes the other hosts' consumers deliver to.
      for subject in [dm, "chat.dm.>", "chat.>", ">", "_INBOX_h1.>", "_INBOX_h2.>", "_INBOX.>"] {
        let refused = try h3.subscribe(subject)
        #expect(
          refused?.contains("Permissions Violation for Subscription to \"\(subject)\"") == true,
          "subscribing to \(subject): \(refused ?? "accepted")")
      }
      // Consumers: with a filter of its choice, by every API subject; and
      // through the one subject its permissions allow, with another filter
      // in the request, which the server refuses.
      let covering =
        #"{"stream_name":"CHAT","config":{"name":"h3","durable_name":"h3","filter_subject":"chat.dm.>","ack_policy":"all"}}"#
      for subject in [
        "$JS.API.CONSUMER.CREATE.CHAT", "$JS.API.CONSUMER.CREATE.CHAT.h3",
        "$JS.API.CONSUMER.CREATE.CHAT.h3.chat.dm.>",
        "$JS.API.CONSUMER.CREATE.CHAT.h3-dm1.chat.dm.>",
        "$JS.API.CONSUMER.CREATE.CHAT.h3-dm2.chat.dm.*.*.*",
        "$JS.API.CONSUMER.CREATE.CHAT.h3-dm1.chat.dm.h1.h2.h1",
        "$JS.API.CONSUMER.DURABLE.CREATE.CHAT.h3", "$JS.API.STREAM.UPDATE.CHAT",
        "$JS.API.STREAM.CREATE.CHAT", "$JS.API.CONSUMER.MSG.NEXT.CHAT.h1",
        "$JS.API.CONSUMER.MSG.NEXT.CHAT.h2-dm1", "$JS.API.CONSUMER.INFO.CHAT.h1-dm1",
      ] {
        try Self.expectRefused(h3, subject, covering)
      }
      for config in [
        #""filter_subject":"chat.dm.>""#, #""filter_subject":"chat.>""#,
        #""filter_subjects":["chat.room.>","chat.dm.>"]"#, #""filter_subject":"""#,
      ] {
        let answer = try h3.request(
          "$JS.API.CONSUMER.CREATE.CHAT.h3.chat.room.>",
          #"{"stream_name":"CHAT","config":{"name":"h3","durable_name":"h3","ack_policy":"all",\#(config)}}"#
        )
        #expect(answer.contains("\"error\""), "a consumer with \(config): \(answer)")
      }
      // Single messages, by sequence or by subject.
      for sequence in 1...4 {
        try Self.expectRefused(h3, "$JS.API.STREAM.MSG.GET.CHAT", #"{"seq":\#(sequence)}"#)
        try Self.expectRefused(h3, "$JS.API.DIRECT.GET.CHAT", #"{"seq":\#(sequence)}"#)
      }
      try Self.expectRefused(h3, "$JS.API.STREAM.MSG.GET.CHAT", #"{"last_by_subj":"\#(dm)"}"#)
      try Self.expectRefused(h3, "$JS.API.DIRECT.GET.CHAT.\(dm)")
      try Self.expectRefused(h3, "$JS.API.DIRECT.GET.CHAT.chat.dm.h1.h2.h2")
      // What stays visible, as chatbroker(8) says: the subject's name and
      // its count of messages, never a text.
      let info = try h3.request("$JS.API.STREAM.INFO.CHAT", #"{"subjects_filter":"chat.dm.>"}"#)
      #expect(info.contains("\"\(dm)\":1"), "\(info)")
      #expect(!info.contains("secret"))

      // h3's broker shows the room's line and no direct message.
      #expect(try Hosts.texts(clients[2]) == ["for everyone"])
      #expect(try clients[2].request("HISTORY @root@h1") == ["OK HISTORY @root@h1 0"])
      #expect(try clients[2].request("HISTORY @root@h2") == ["OK HISTORY @root@h2 0"])
      #expect(!hosts[2].journal.contains("between"))
      #expect(!hosts[2].log.contains("between"))
      // And the two hosts have both lines, with the same ids in one order.
      try waitUntil(timeout: 20, "both lines in h1's and h2's history of the conversation") {
        try clients[0].request("HISTORY @root@h2").count == 3
          && clients[1].request("HISTORY @root@h1").count == 3
      }
      let onH1 = try clients[0].request("HISTORY @root@h2").dropLast()
      let onH2 = try clients[1].request("HISTORY @root@h1").dropLast()
      let ids = { (lines: ArraySlice<String>) in lines.map { $0.split(separator: " ")[2] } }
      #expect(onH1.count == 2 && ids(onH1) == ids(onH2))
    }
  }
}
