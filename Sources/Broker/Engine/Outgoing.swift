import LineProtocol

/// One event on its way to one or many connections. Each wire format
/// encodes it at most once, however many connections it goes to: a `MSG`
/// fanned out to 90 line-protocol and 10 IRC connections is encoded twice,
/// not 100 times (chatbroker(7), "Order and durability" keeps each
/// connection's order; this only shares the bytes).
///
/// A class so that handing it to a thousand connections costs a retain
/// each, not a copy of the event's strings.
public final class Outgoing {
  public let event: BrokerEvent
  /// The event as a line of chatbroker(7)'s line protocol, encoded the
  /// first time a line-protocol connection asks. Release builds of Broker
  /// leave out the run-time exclusivity checks that once made a lazily
  /// cached property cost more than encoding up front (Package.swift); a
  /// history sent to an IRC client, one event per line, is then never
  /// encoded for the line protocol at all (`perf record` under IRC
  /// CHATHISTORY floods: a fifth of the poll thread).
  public private(set) lazy var line: [UInt8] = LineCodec.encode(event)
  /// Encodings for other wire formats, keyed by the codec's variant (IRC
  /// lines differ by the capabilities a client negotiated). Few variants
  /// exist, so a short list beats a dictionary.
  private var otherEncodings: [(variant: Int, bytes: [UInt8])] = []

  public init(_ event: BrokerEvent) {
    self.event = event
  }

  /// The event in another wire format, encoded by `encode` the first time
  /// this `variant` is asked for.
  public func encoded(variant: Int, _ encode: (BrokerEvent) -> [UInt8]) -> [UInt8] {
    for entry in otherEncodings where entry.variant == variant { return entry.bytes }
    let bytes = encode(event)
    otherEncodings.append((variant, bytes))
    return bytes
  }
}
