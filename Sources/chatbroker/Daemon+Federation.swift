import Broker
import Foundation
import NatsLink

extension Daemon {
  /// Tells the engine which rooms are shared, before the journal is
  /// replayed (chatbroker(8), "FEDERATION").
  func federate(_ engine: Engine) {
    guard let settings = options.federation.settings else { return }
    engine.federate(settings)
    log.info(
      "sharing rooms",
      [
        "node": settings.node, "share": settings.patterns.joined(separator: ","),
        "nats": options.federation.servers.joined(separator: ","),
      ])
    let federation = options.federation
    if federation.user == nil && federation.token == nil && federation.credentialsFile == nil {
      // Then nothing ties a node to its subjects: whoever reaches the
      // server can publish as any node.
      log.warning(
        "connecting to NATS without credentials: if the server accepts that, anyone who can reach it can post as any user of any node",
        ["node": settings.node])
    }
  }

  /// Starts the link to the stream, on the queue, once the journal is
  /// replayed: each reader reads on after the last sequence the journal
  /// applied for it.
  func startFederation(_ server: Server, _ engine: Engine) {
    guard options.federation.settings != nil else { return }
    let link = NatsLink(
      options.federation.linkConfiguration, after: engine.streamSequences,
      deliver: { [unowned server] lines, reader, last, epoch in
        server.deliver(lines, reader: reader, through: last, epoch: epoch)
      },
      report: { [unowned server] state, fields in server.federationStateChanged(state, fields) },
      ownLastID: { [unowned server] id in server.ownLinesFound(upTo: id) },
      refused: { [unowned server] reason in server.publishRefused(reason) },
      created: { [unowned server] time in server.streamFound(created: time) },
      presence: { [unowned server] room, node, users in
        server.presenceReceived(room: room, node: node, users: users)
      },
      duplicate: { [unowned server] line, sequence, created in
        server.duplicateAcknowledged(line, sequence: sequence, streamCreated: created)
      })
    server.attachFederation(link)
    NatsLink.initializeLibrary()
    // Connecting may take the NATS client's timeout per server: not on the
    // queue, which serves clients meanwhile.
    Thread.detachNewThread { [self] in
      do throws(NatsError) {
        try link.start()
      } catch {
        fail("cannot start the NATS link: \(error.description)", status: ExitCode.configuration)
      }
    }
  }
}
