import LineProtocol

/// The seeded generator the fuzzer draws every request from: LineProtocol's,
/// also under this module's name for callers that spell it
/// `ProtocolFuzz.SplitMix64`.
public typealias SplitMix64 = LineProtocol.SplitMix64
