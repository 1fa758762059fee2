import ChatClient

func runInteractive(socketPath: String, targets: [String], environment: [String: String])
  -> ExitStatus
{
  complain("the chat screen is not built yet")
  return .unavailable
}
