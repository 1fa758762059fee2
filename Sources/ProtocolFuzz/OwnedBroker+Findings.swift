/// Stopping and starting the fuzzer's own broker, with what goes wrong
/// recorded as findings: every oracle that restarts the broker (a crash
/// found, the dirty-read ledger, the privacy oracle's restart, the end of
/// a run) judges it the same way.
extension OwnedBroker {
  /// SIGTERM; a liveness finding when it does not end with status 0.
  func stopCleanly(recordingIn findings: FindingLog) {
    let status = stop()
    guard status != 0 else { return }
    findings.record(
      Finding(
        category: "liveness", summary: "the broker does not stop cleanly on SIGTERM",
        detail: status.map { "exit status \($0)" } ?? "still running after 5 s"))
  }

  /// Started again on its journal; a restart finding, naming `what` came
  /// before, and false when it does not start.
  @discardableResult
  func startAgain(after what: String, recordingIn findings: FindingLog) -> Bool {
    do {
      try start()
      return true
    } catch {
      findings.record(
        Finding(
          category: "restart", summary: "the broker does not start again on its journal",
          detail: "after \(what): \(error)"))
      return false
    }
  }
}
