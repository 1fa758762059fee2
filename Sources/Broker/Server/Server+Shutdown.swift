import CShims
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// Shutdown: BYE to every client, the last group commit, and the end
/// once all have read it or the deadline passed.
extension Server {

  /// `BYE` to every client, in the next pass; then `completion` (in a
  /// pass, on the queue) at the end of the first pass that finds all
  /// output written, or once `deadline` has passed. From any thread.
  public func shutdown(
    within deadline: DispatchTimeInterval = .milliseconds(900),
    completion: @escaping @Sendable () -> Void
  ) {
    poll.post { [unowned self] in
      stopping = true
      for listener in accepting.listeners {
        poll.unregister(listener.fd)
        Glibc.close(listener.fd)
      }
      accepting.listeners.removeAll()
      engine.shutdown()
      // Browsers' connections that are no session yet (Server+WebDoor).
      for connection in connections.all where connection.awaitingAdmission {
        close(connection.id)
      }
      let now = DispatchTime.now()
      let giveUp = now + deadline
      draining = (giveUp, completion)
      // A pass at the deadline, in case no client's output ends one sooner.
      poll.after(
        milliseconds: Int((giveUp.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000) + 1
      ) {}
    }
  }

  /// The last step of a pass while shutting down: done once every client
  /// has read its `BYE` and closed, or the deadline has passed.
  func completeShutdownIfDrained() {
    guard let (giveUp, completion) = draining,
      connections.isEmpty || DispatchTime.now() >= giveUp
    else { return }
    draining = nil
    completion()
  }
}
