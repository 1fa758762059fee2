import Foundation
import LineProtocol

/// Target `when`: the `<when>` resolver with any now, horizon and zone. It
/// must answer or refuse, never trap; an answer lies after now, within the
/// horizon and in years 1 to 9999; a refusal is a clean broker line.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWhen(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  var input = FuzzInput(data, count)
  let selector = input.byte()
  // Half the runs use a sane clock and horizon, so the forms get explored
  // past the range checks; the other half use anything at all.
  let sane = selector & 1 == 0
  let rawNow = input.int64()
  let rawHorizon = input.int64()
  let now = Timestamp(
    milliseconds: sane ? 1_798_131_600_000 + rawNow % 400_000_000_000 : rawNow)
  let horizon = sane ? WhenParser.defaultHorizonMilliseconds : rawHorizon
  let zone = fuzzTimeZones[Int(selector >> 1) % fuzzTimeZones.count]
  let word = String(decoding: input.rest, as: UTF8.self)
  do throws(RequestError) {
    let due = try WhenParser.resolve(
      word, now: now, timeZone: zone, horizonMilliseconds: horizon)
    guard due > now, due.isInCalendarRange, due.milliseconds - now.milliseconds <= horizon else {
      fatalError("\(word.debugDescription) resolved to \(due) (now \(now), horizon \(horizon))")
    }
    if Timestamp(rfc3339: due.description) != due { fatalError("\(due) does not read back") }
  } catch {
    guard [.badTime, .past, .tooFar].contains(error.code) else {
      fatalError("unexpected code \(error.code)")
    }
    checkBrokerLine(error.line, "error for \(word.debugDescription)")
  }
  return 0
}
