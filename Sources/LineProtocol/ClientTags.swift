/// Client-only tags: annotations that one client addresses to the other
/// clients of a conversation (IRC's `+typing=active`, `+draft/reply=<id>`),
/// which the broker passes on with a message, or alone
/// (``Request/signal(_:_:)``), and does not keep (chatbroker(7), "IRC":
/// client-only tags). The door that reads them cleans them; a door whose
/// clients cannot read them (the line protocol, so far) leaves them out.
public struct ClientTags: Equatable, Sendable {
  /// One tag: `key` (starting with `+`) and its value, if any, unescaped.
  public struct Tag: Equatable, Sendable {
    public let key: String
    public let value: String?

    public init(_ key: String, _ value: String? = nil) {
      self.key = key
      self.value = value
    }
  }

  public let tags: [Tag]

  public init(_ tags: [Tag] = []) { self.tags = tags }

  public var isEmpty: Bool { tags.isEmpty }
}
