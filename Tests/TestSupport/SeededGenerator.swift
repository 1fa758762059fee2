import ProtocolFuzz

/// A generator with a seed (SplitMix64), so that a random test case, or the
/// moments a crash test kills the broker, can be reproduced from the seed
/// printed with it. The fuzzer's own, so that the tree holds one copy.
public typealias SeededGenerator = SplitMix64
