import CNats
import Foundation
import Posix

/// The yardstick of `chatbench federation`: libnats alone publishing to a
/// JetStream stream on the same cluster, asynchronously with
/// `outstanding` acknowledgements in flight and a `Nats-Msg-Id` on each,
/// as chatbroker's outbox does (chatbroker(8), "FEDERATION").
enum RawNatsPublisher {
  /// Messages per second for `count` messages of `size` bytes to a fresh
  /// stream `RAW` (subjects `raw.>`) with `replicas` replicas.
  static func messagesPerSecond(
    url: String, replicas: Int, count: Int, size: Int = 100, outstanding: Int = 256
  ) throws -> Double {
    var connection: OpaquePointer?
    guard natsConnection_ConnectTo(&connection, url) == NATS_OK else {
      throw BenchError("raw publisher: cannot connect to \(url)")
    }
    defer { natsConnection_Destroy(connection) }
    var options = jsOptions()
    jsOptions_Init(&options)
    options.Wait = 5000
    options.PublishAsync.MaxPending = Int64(outstanding)
    var jetStream: OpaquePointer?
    guard natsConnection_JetStream(&jetStream, connection, &options) == NATS_OK else {
      throw BenchError("raw publisher: no JetStream context")
    }
    defer { jsCtx_Destroy(jetStream) }
    var config = jsStreamConfig()
    jsStreamConfig_Init(&config)
    config.Storage = js_FileStorage
    config.Replicas = Int64(replicas)
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    let subject = strdup("raw.>")
    defer { free(subject) }
    var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(subject)]
    let created = "RAW".withCString { name in
      config.Name = name
      return subjects.withUnsafeMutableBufferPointer { buffer in
        config.Subjects = buffer.baseAddress
        config.SubjectsLen = 1
        return js_AddStream(&info, jetStream, &config, nil, &errorCode)
      }
    }
    guard created == NATS_OK else {
      throw BenchError("raw publisher: cannot create the stream (\(errorCode.rawValue))")
    }
    jsStreamInfo_Destroy(info)
    let payload = [UInt8](repeating: UInt8(ascii: "x"), count: size)
    let started = monotonicNanoseconds()
    for index in 0..<count {
      var message: OpaquePointer?
      _ = payload.withUnsafeBytes {
        natsMsg_Create(&message, "raw.h1", nil, $0.baseAddress, Int32($0.count))
      }
      natsMsgHeader_Set(message, "Nats-Msg-Id", "h1:\(index)")
      guard js_PublishMsgAsync(jetStream, &message, nil) == NATS_OK else {
        natsMsg_Destroy(message)
        throw BenchError("raw publisher: publish failed")
      }
    }
    var complete = jsPubOptions()
    jsPubOptions_Init(&complete)
    complete.MaxWait = 60_000
    guard js_PublishAsyncComplete(jetStream, &complete) == NATS_OK else {
      throw BenchError("raw publisher: not every message was acknowledged")
    }
    return Double(count) / (Double(monotonicNanoseconds() - started) / 1e9)
  }
}
