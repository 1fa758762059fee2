/// The fuzzer's rule for when a reader that winds down is frozen out:
/// nothing moved either way for `bound` seconds. Before the client
/// half-closes, movement is its own bytes going out or lines coming in;
/// after, only lines coming in, since everything it asked is then with the
/// broker. The bound runs from the last movement, not from the start of the
/// wind-down: a trickling client may take longer than the bound just to
/// send what it had queued, and waits for nothing meanwhile.
struct SilenceWatch {
  let bound: Double
  /// When the connection is overdue; never before its wind-down.
  private(set) var deadline = Double.infinity
  private(set) var halfClosed = false

  init(bound: Double = 15) {
    self.bound = bound
  }

  /// The client stops asking and starts to wind down.
  mutating func windDown(at now: Double) {
    deadline = now + bound
  }

  /// Some of its bytes went out.
  mutating func wrote(at now: Double) {
    if !halfClosed && deadline.isFinite { deadline = now + bound }
  }

  /// Lines came in.
  mutating func received(at now: Double) {
    if deadline.isFinite { deadline = now + bound }
  }

  /// It shut down its writing side: from now on, only the broker can move.
  mutating func halfClose(at now: Double) {
    halfClosed = true
    deadline = now + bound
  }

  func isOverdue(at now: Double) -> Bool { now > deadline }
}
