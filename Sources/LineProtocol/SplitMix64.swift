/// SplitMix64: a tiny, fast random generator with a seed, so that a fuzz
/// run, a benchmark's input or a randomised test that finds something can
/// be run again, value for value, from the seed it printed. Here, at the
/// bottom of the modules, so that the fuzzer, chatbench and every test
/// target draw from the same one.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  /// A generator of its own for a worker, derived from this one, so that
  /// what each worker does depends only on the seed and its number.
  public mutating func split() -> SplitMix64 {
    SplitMix64(seed: next())
  }

  /// True with probability `percent` in 100.
  public mutating func chance(_ percent: Int) -> Bool {
    Int.random(in: 0..<100, using: &self) < percent
  }

  /// One of `choices`, which must not be empty.
  public mutating func pick<T>(_ choices: [T]) -> T {
    choices[Int.random(in: 0..<choices.count, using: &self)]
  }
}
