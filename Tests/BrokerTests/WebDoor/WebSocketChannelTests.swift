import ProtocolFuzz
import Testing

@testable import Broker

/// The web door's WebSocket as libwslay reads and frames it for the broker
/// (chatbroker(7), "The web door"), judged by the tests' own frames
/// (``WebSocketFrames``): whole messages out, a long one discarded as it
/// arrives, pings and the peer's close as messages, the RFC's rules, and
/// frames written that keep no state from one to the next.
@Suite("The web door's WebSocket frames")
struct WebSocketChannelTests {
  /// Feeds `bytes` as the door does, a read at a time, and returns the
  /// messages.
  private func feed(_ channel: WebSocketChannel, _ bytes: [UInt8]) -> [WebSocketChannel.Message] {
    var offset = 0
    var messages: [WebSocketChannel.Message] = []
    while offset < bytes.count {
      let taken = bytes[offset...].withUnsafeBytes { channel.receive($0) }
      #expect(taken > 0 && taken <= WebSocketChannel.bytesPerReceive)
      offset += taken
      messages += channel.takeMessages()
    }
    return messages
  }

  private func frames(_ bytes: [UInt8]) throws -> [WebSocketFrames.Frame] {
    var bytes = bytes
    return try WebSocketFrames.decode(&bytes)
  }

  @Test("text frames, whole or in fragments, are messages, and pings in between")
  func text() throws {
    let channel = WebSocketChannel(maximumMessageBytes: 4096)
    let bytes =
      WebSocketFrames.text("PING 1")
      + WebSocketFrames.encode(
        opcode: WebSocketFrames.text, payload: Array("SAY #a ".utf8), fin: false)
      + WebSocketFrames.encode(opcode: WebSocketFrames.ping, payload: [1])
      + WebSocketFrames.encode(opcode: WebSocketFrames.continuation, payload: Array("hi".utf8))
    #expect(
      feed(channel, bytes) == [
        .text(Array("PING 1".utf8)), .ping([1]), .text(Array("SAY #a hi".utf8)),
      ])
  }

  @Test("lines go out as text frames, pongs and close frames as the RFC writes them")
  func writing() throws {
    let channel = WebSocketChannel(maximumMessageBytes: 100)
    let long = [UInt8](repeating: 65, count: 70_000)
    #expect(
      try frames(channel.text(Array("OK PING 1".utf8)[...]) + channel.text(long[...]))
        == [
          WebSocketFrames.Frame(
            fin: true, opcode: WebSocketFrames.text, payload: Array("OK PING 1".utf8)),
          WebSocketFrames.Frame(fin: true, opcode: WebSocketFrames.text, payload: long),
        ])
    #expect(
      try frames(channel.pong([7]))
        == [WebSocketFrames.Frame(fin: true, opcode: WebSocketFrames.pong, payload: [7])])
    let close = try #require(try frames(channel.close(code: 1008, reason: "no")).first)
    #expect(close.opcode == WebSocketFrames.close && close.closeCode == 1008)
    #expect(close.closeReason == "no")
  }

  @Test("a frame written after a close frame was is still a frame: the output's order decides")
  func stateless() throws {
    let channel = WebSocketChannel(maximumMessageBytes: 100)
    _ = channel.close(code: 1000, reason: "")
    #expect(try frames(channel.text(Array("late".utf8)[...])).first?.text == "late")
  }

  @Test("a message over the limit, in one frame or in fragments, is read as too long and not kept")
  func tooLong() {
    let channel = WebSocketChannel(maximumMessageBytes: 100)
    let big = [UInt8](repeating: UInt8(ascii: "a"), count: 10_000)
    let fragmented =
      WebSocketFrames.encode(
        opcode: WebSocketFrames.text, payload: [UInt8](repeating: 98, count: 60), fin: false)
      + WebSocketFrames.encode(
        opcode: WebSocketFrames.continuation, payload: [UInt8](repeating: 98, count: 60))
    let messages = feed(
      channel,
      WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: big) + fragmented
        + WebSocketFrames.text(String(repeating: "c", count: 100)))
    #expect(messages == [.tooLong, .tooLong, .text([UInt8](repeating: 99, count: 100))])
    #expect(channel.isReading)
  }

  @Test("a binary message is read as binary; the peer's close frame ends the reading")
  func binaryAndClose() {
    let channel = WebSocketChannel(maximumMessageBytes: 100)
    let messages = feed(
      channel,
      WebSocketFrames.encode(opcode: WebSocketFrames.binary, payload: [0, 1, 2])
        + WebSocketFrames.close(code: 1001) + WebSocketFrames.text("after the close"))
    #expect(messages == [.binary, .close(code: 1001)])
    #expect(!channel.isReading)
    #expect(channel.failure == nil, "a close is no broken frame")
  }

  @Test(
    "a frame that breaks RFC 6455 ends the reading, with the status to close with",
    arguments: [
      ("unmasked", 1002), ("reserved", 1002), ("opcode", 1002), ("utf8", 1007),
      ("continuation first", 1002), ("long ping", 1002), ("fragmented ping", 1002),
    ])
  func broken(kind: String, code: Int) {
    let channel = WebSocketChannel(maximumMessageBytes: 100)
    let frame =
      switch kind {
      case "unmasked":
        WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: [65], mask: nil)
      case "reserved":
        WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: [65], reserved: 4)
      case "opcode": WebSocketFrames.encode(opcode: 3, payload: [65])
      case "utf8": WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: [0xC3, 0x28])
      case "long ping":
        WebSocketFrames.encode(
          opcode: WebSocketFrames.ping, payload: [UInt8](repeating: 1, count: 126))
      case "fragmented ping":
        WebSocketFrames.encode(opcode: WebSocketFrames.ping, payload: [1], fin: false)
      default: WebSocketFrames.encode(opcode: WebSocketFrames.continuation, payload: [65])
      }
    #expect(feed(channel, frame + WebSocketFrames.text("PING")).isEmpty)
    #expect(!channel.isReading)
    #expect(channel.failure == UInt16(code))
  }

  @Test("the close frame's reason is cut to 123 bytes, never inside a character")
  func closeReason() throws {
    let channel = WebSocketChannel(maximumMessageBytes: 100)
    let frame = try #require(
      try frames(channel.close(code: 1008, reason: String(repeating: "é", count: 100))).first)
    #expect(frame.closeCode == 1008)
    #expect(frame.closeReason == String(repeating: "é", count: 61))
  }
}
