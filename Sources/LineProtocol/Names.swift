/// A room name: `#` then 1 to 32 of `a-z 0-9 . _ -`, ASCII letters folded
/// to lower case so that `#Ops` and `#ops` are one room.
public struct RoomName: Hashable, Comparable, Sendable, CustomStringConvertible {
  public let description: String

  public static let maximumLength = 32

  /// Validates and folds `text`; `nil` when it is not a room name.
  public init?<S: StringProtocol>(_ text: S) {
    guard let room = withUTF8Bytes(text, RoomName.init(utf8:)) else { return nil }
    self = room
  }

  /// The same from UTF-8 bytes (the journal reads them without a String).
  public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
    guard (2...Self.maximumLength + 1).contains(bytes.count), bytes[0] == UInt8(ascii: "#")
    else { return nil }
    var folded = false
    for byte in bytes[1...] {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
        continue
      case UInt8(ascii: "A")...UInt8(ascii: "Z"):
        folded = true
      default:
        return nil
      }
    }
    guard folded else {
      description = string(bytes)
      return
    }
    description = String(unsafeUninitializedCapacity: bytes.count) { buffer in
      for (index, byte) in bytes.enumerated() {
        let isUpper = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
        buffer[index] = isUpper ? byte + 32 : byte
      }
      return bytes.count
    }
  }

  public static func < (lhs: RoomName, rhs: RoomName) -> Bool {
    lhs.description < rhs.description
  }
}

/// Login names, as the system spells them. The broker only ever learns a
/// user's name from the kernel; this check is for names typed after `@`.
public enum UserName {
  public static let maximumLength = 32

  /// Whether `text` has the shape of a login name: 1 to 32 of
  /// `A-Z a-z 0-9 _ . -`, not starting with `-`, optionally ending in `$`
  /// (as Samba machine accounts do).
  public static func isValid<S: StringProtocol>(_ text: S) -> Bool {
    withUTF8Bytes(text, isValid(utf8:))
  }

  /// The same on UTF-8 bytes.
  public static func isValid(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard (1...maximumLength).contains(bytes.count), bytes[0] != UInt8(ascii: "-") else {
      return false
    }
    for (index, byte) in bytes.enumerated() {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."),
        UInt8(ascii: "-"):
        continue
      case UInt8(ascii: "$") where index == bytes.count - 1 && index > 0:
        continue
      default:
        return false
      }
    }
    return true
  }
}

/// Where a message goes: a room, or `@user` for a direct conversation.
public enum Target: Hashable, Sendable, CustomStringConvertible {
  case room(RoomName)
  case user(String)

  public init?<S: StringProtocol>(_ text: S) {
    guard let target = withUTF8Bytes(text, Target.init(utf8:)) else { return nil }
    self = target
  }

  /// The same from UTF-8 bytes (the journal reads them without a String).
  public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
    if bytes.first == UInt8(ascii: "@") {
      let name = bytes.slice(1, bytes.count)
      guard UserName.isValid(utf8: name) || Self.isRemoteUser(name) else { return nil }
      self = .user(string(name))
    } else if let room = RoomName(utf8: bytes) {
      self = .room(room)
    } else {
      return nil
    }
  }

  public var description: String {
    switch self {
    case .room(let room): room.description
    case .user(let user): "@" + user
    }
  }
}

/// A message id: opaque to clients (1 to 32 of `A-Z a-z 0-9`), unique for
/// the life of the journal. The broker hands out a counter in lower-case
/// base 36, so ids stay short and sort by age within one base-36 length.
public struct MessageID: Hashable, Comparable, Sendable, CustomStringConvertible {
  public let value: UInt64

  public static let maximumLength = 32

  /// The largest id the broker ever hands out, `zzzzzzzzzzzz` (36^12 - 1):
  /// ids are at most 12 characters, and counting up to it never overflows.
  /// A journal holding a larger id is damaged (chatbroker(8)).
  public static let maximumValue: UInt64 = 4_738_381_338_321_616_895

  /// No message ever has this id: it stands for well-formed ids that the
  /// broker cannot have issued (upper case, leading zeros, or above
  /// ``maximumValue``).
  public static let none = MessageID(value: .max)

  public init(value: UInt64) {
    self.value = value
  }

  /// Parses an id as clients send it. `nil` when it has not the form of an
  /// id at all; `.none` when it has the form but names no possible message.
  public init?<S: StringProtocol>(_ text: S) {
    guard let id = withUTF8Bytes(text, MessageID.init(utf8:)) else { return nil }
    self = id
  }

  /// The same from UTF-8 bytes (the journal reads them without a String).
  public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
    guard (1...Self.maximumLength).contains(bytes.count) else { return nil }
    var value: UInt64 = 0
    // Counters are written without leading zeros, so `00a` cannot be `a`.
    var representable = bytes.count == 1 || bytes[0] != UInt8(ascii: "0")
    for byte in bytes {
      let digit: UInt64
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = UInt64(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "Z"):
        representable = false
        continue
      default: return nil
      }
      let (times, overflowA) = value.multipliedReportingOverflow(by: 36)
      let (sum, overflowB) = times.addingReportingOverflow(digit)
      if overflowA || overflowB { representable = false }
      value = sum
    }
    self = representable && value <= Self.maximumValue ? MessageID(value: value) : .none
  }

  public var description: String {
    String(value, radix: 36)
  }

  /// Appends the id's text (lower-case base 36) without making a String:
  /// ids are written into every journal record and MSG line.
  public func appendDescription(to bytes: inout [UInt8]) {
    var digits:
      (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64
      ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    var rest = value
    withUnsafeMutableBytes(of: &digits) { storage in
      repeat {
        let digit = UInt8(rest % 36)
        storage[count] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
        count += 1
        rest /= 36
      } while rest > 0
      for index in stride(from: count - 1, through: 0, by: -1) {
        bytes.append(storage[index])
      }
    }
  }

  public static func < (lhs: MessageID, rhs: MessageID) -> Bool {
    lhs.value < rhs.value
  }
}

extension Target {
  /// `user@node`: a user of another host sharing rooms with this one
  /// (chatbroker(8), "FEDERATION"); the node is 1 to 32 of `a-z 0-9 _ -`.
  static func isRemoteUser(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let at = bytes.lastIndex(of: UInt8(ascii: "@")), at > 0 else { return false }
    let node = bytes.slice(at + 1, bytes.count)
    guard (1...32).contains(node.count) else { return false }
    let nodeValid = node.allSatisfy {
      ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z"))
        || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_")
        || $0 == UInt8(ascii: "-")
    }
    return nodeValid && UserName.isValid(utf8: bytes.slice(0, at))
  }
}
