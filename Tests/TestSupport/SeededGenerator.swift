import LineProtocol

/// A generator with a seed (SplitMix64), so that a random test case, or the
/// moments a crash test kills the broker, can be reproduced from the seed
/// printed with it. LineProtocol's, so that the tree holds one copy.
public typealias SeededGenerator = SplitMix64
