/// How much expanding recurrence rules one step of the broker may do: a
/// request, a timer step (chatbroker(7), "Series": what a rule may cost).
///
/// The budget counts the work libical does, not the occurrences it
/// returns: each local time libical's iterator looks at (one step), each
/// month or year it lays out looking for days (a few steps), each
/// iterator made. A rule whose filters seldom match makes libical look at
/// many times for each one it returns (`FREQ=MINUTELY;BYMONTH=11` looks at
/// every minute of the year), so ``CalendarRule`` hands libical a window
/// (an `UNTIL`) that the steps left can pay for, and stops when they run
/// out: a step of the broker then ends however sparse the rule.
///
/// Measured with a release build on the 2-core machine of the README, a
/// step costs 3 to 6 µs of the serving thread (a time libical only looks
/// at, or one it returns, which Swift then maps to an instant): the
/// budget of ``stepsPerRequest`` is at most about 8 ms of it, under the
/// 10 ms a step may take (chatbroker(8), LOGGING).
public final class RecurrenceBudget {
  /// The steps one request or timer step may spend (chatbroker(7), Limits).
  public static let stepsPerRequest = 1_500

  public let limit: Int
  public private(set) var spent = 0

  /// The budget ran out before the occurrence was found.
  public struct Exceeded: Error, Equatable, Sendable {
    public let limit: Int
  }

  public init(limit: Int = RecurrenceBudget.stepsPerRequest) {
    self.limit = limit
  }

  public var remaining: Int { max(0, limit - spent) }

  /// Spends `steps`; throws, having spent nothing, when fewer are left.
  public func charge(_ steps: Int) throws(Exceeded) {
    guard steps <= remaining else { throw Exceeded(limit: limit) }
    spent += steps
  }

  /// Spends `steps`, at most what is left: for work already done.
  func record(_ steps: Int) {
    spent = min(limit, spent + steps)
  }

  /// Spends what is left: the work stopped because nothing was.
  func exhaust() -> Exceeded {
    spent = limit
    return Exceeded(limit: limit)
  }
}
