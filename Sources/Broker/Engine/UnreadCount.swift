/// What is new for one user in one conversation (chatbroker(7), "Your
/// conversations").
struct UnreadCount: Equatable {
  /// Messages after the read marker not written by the user.
  var unread = 0
  /// Of those, the ones that mention the user, or all in a direct
  /// conversation.
  var mentions = 0
}
