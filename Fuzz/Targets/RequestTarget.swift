import Foundation
import LineProtocol

@testable import Broker

/// Target `request`: arbitrary bytes from a client, cut into lines by the
/// framer (in pieces, as reads arrive), parsed, and handled by an engine on
/// a fixed clock. Every answer must be a clean broker line.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequest(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  var input = FuzzInput(data, count)
  let split = Int(input.byte())
  let bytes = input.rest
  var framer = LineFramer(maximumLineBytes: 512)
  let world = FuzzWorld()
  let alice = world.connect("alice")
  world.connect("bob")
  var frames: [Frame] = []
  let pieceLength = max(1, split)
  var start = 0
  while start < bytes.count {
    let end = min(bytes.count, start + pieceLength)
    framer.append(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    while let frame = framer.next() { frames.append(frame) }
    start = end
  }
  if let last = framer.finish() { frames.append(last) }
  for frame in frames {
    if case .line(let line) = frame {
      if line.utf8.contains(UInt8(ascii: "\n")) { fatalError("framed line holds an LF") }
      if case .failure(let error) = RequestParser.parse(line) {
        checkBrokerLine(error.line, "error for \(line.debugDescription)")
      }
    }
    world.receive(frame, from: alice)
    world.clock.now = world.clock.now + 1
  }
  world.clock.now = world.clock.now + 400 * 86_400_000
  world.engine.timerFired()
  return 0
}
