import Dispatch
import Glibc
import LineProtocol

/// The I/O state of one accepted connection. Confined to the server's queue.
final class Connection {
  let id: ConnectionID
  let fd: Int32
  let user: String
  var framer: LineFramer
  /// Set for a client of the IRC listener: its registration, capabilities
  /// and codec. Nil for the line protocol.
  let irc: IRCSession?
  let readSource: DispatchSourceRead
  let writeSource: DispatchSourceWrite

  /// Released bytes, ready to be written.
  var output = OutputBuffer()
  /// Lines waiting for the journal, or behind lines that do.
  var held: [HeldLine] = []
  var heldBytes = 0

  var readSuspended = true
  var writeSuspended = true
  /// The engine is done with this connection: flush, then close.
  var closing = false
  /// Listed among the server's connections to flush after this event.
  var isDirty = false
  /// Output went over the limit; nothing more is queued.
  var overflowed = false
  /// The framer may still hold complete requests: the last turn ended on
  /// its budget, or bytes arrived since the framer was last emptied.
  var mayHaveRequests = false
  /// Its own replies wait to be sent above the server's threshold: its
  /// requests wait until they drain (back-pressure at request level).
  var outputBlocked = false
  /// The client shut down its sending side; once the framer is empty the
  /// connection is answered and closed.
  var inputEnded = false
  /// Waiting in the server's round-robin queue of connections with work.
  var isQueued = false
  /// Sources cancelled so far; the descriptor closes after both.
  var cancelledSources = 0
  /// ``cancelSources()`` ran: the sources must never be suspended again.
  var sourcesCancelled = false

  init(
    id: ConnectionID, fd: Int32, user: String, maximumLineBytes: Int, queue: DispatchQueue,
    irc: IRCSession? = nil
  ) {
    self.irc = irc
    self.id = id
    self.fd = fd
    self.user = user
    framer = LineFramer(maximumLineBytes: maximumLineBytes)
    readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
  }

  var pendingBytes: Int { output.count + heldBytes }

  func pauseReading() {
    guard !readSuspended, !sourcesCancelled else { return }
    readSource.suspend()
    readSuspended = true
  }

  func resumeReading() {
    guard readSuspended, !closing else { return }
    readSuspended = false
    readSource.resume()
  }

  func waitForWritable() {
    guard writeSuspended else { return }
    writeSuspended = false
    writeSource.resume()
  }

  func stopWaitingForWritable() {
    guard !writeSuspended, !sourcesCancelled else { return }
    writeSource.suspend()
    writeSuspended = true
  }

  /// Cancels both sources; each must be resumed for its cancel handler to
  /// run, and libdispatch aborts on releasing a suspended source, so none
  /// is suspended again afterwards (a flush or a turn still under way may
  /// try).
  func cancelSources() {
    guard !sourcesCancelled else { return }
    sourcesCancelled = true
    readSource.cancel()
    writeSource.cancel()
    if readSuspended {
      readSuspended = false
      readSource.resume()
    }
    if writeSuspended {
      writeSuspended = false
      writeSource.resume()
    }
  }
}
