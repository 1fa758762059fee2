import LineProtocol

/// A conversation and the time of its newest message in a window: one
/// answer of ``Engine/activeConversations(of:after:before:limit:)``.
public struct ConversationActivity: Equatable, Sendable {
  public let target: Target
  public let latest: Timestamp
}
