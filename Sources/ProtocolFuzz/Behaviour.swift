/// How one fuzzing connection treats the broker for its short life.
enum Behaviour: String, CaseIterable {
  /// Pipelines small batches of random and mutated requests and reads all.
  case chatter
  /// Pipelines hundreds of expensive requests (`HISTORY`, `ROOMS`, `JOIN`)
  /// and reads all.
  case flooder
  /// Floods and never reads a byte.
  case nonReading = "non-reading"
  /// Sends its lines a few bytes at a time.
  case trickling
  /// Sends a batch, the last line maybe without LF, shuts down its writing
  /// side and reads until the broker closes.
  case halfClosing = "half-closing"
  /// Sends a batch and disappears without reading.
  case vanishing

  /// Whether it reads, and so can check what the broker sends.
  var reads: Bool { self != .nonReading && self != .vanishing }

  /// How often each is chosen, in parts of the whole.
  var weight: Int {
    switch self {
    case .chatter: 40
    case .flooder: 15
    case .nonReading: 10
    case .trickling: 10
    case .halfClosing: 15
    case .vanishing: 10
    }
  }

  /// One of `allowed`, by weight.
  static func random(from allowed: [Behaviour], using random: inout SplitMix64) -> Behaviour {
    var draw = Int.random(in: 0..<allowed.map(\.weight).reduce(0, +), using: &random)
    for behaviour in allowed {
      if draw < behaviour.weight { return behaviour }
      draw -= behaviour.weight
    }
    return allowed[0]
  }
}
