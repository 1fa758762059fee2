import Glibc

/// What one request of the dirty-read oracle changes, in a form a line of
/// the broker's can be seen to show (chatbroker(7), "Order and
/// durability"): when the request is refused `STORAGE`, the change was
/// rolled back, and no line any session receives may show it, before the
/// refusal or after it.
///
/// Every request of the oracle carries a token of its own (``token(_:)``)
/// where its change shows: in a message's, topic's or kick's text, a key,
/// a ban mask, or the name of a fresh room (``roomName(_:)``); and each
/// room's flags and limit are set at most once, so that a room showing
/// them shows that one request's change.
public enum Fingerprint: Hashable, Sendable, CustomStringConvertible {
  /// A token in a text, topic, kick reason, key or ban mask.
  case text(String)
  /// The room exists: a line lists it (a ROOM, CONV or MEMBER line; LIST,
  /// WHO or NAMES over IRC).
  case room(String)
  /// The room is one `user` may read: such a line reaches them.
  case roomFor(String, user: String)
  /// The room has the mode letter (`+m`, `+t`, `+n`, `+s`, `+i`).
  case mode(String, letter: Character)
  /// The room's member limit (`+l`) is this number.
  case limit(String, Int)

  public var description: String {
    switch self {
    case .text(let token): "the text \(token)"
    case .room(let room): "the room \(room)"
    case .roomFor(let room, let user): "\(room) for \(user)"
    case .mode(let room, let letter): "\(room) +\(letter)"
    case .limit(let room, let limit): "\(room) +l \(limit)"
    }
  }

  /// The token of serial number `serial`: lower case letters and digits,
  /// so that it is a valid key, ban mask and room name word as well as
  /// text, and it reads whole (`xdt12q` is not in `xdt123q`).
  public static func token(_ serial: Int) -> String { "xdt\(serial)q" }

  /// The fresh room of serial number `serial`.
  public static func roomName(_ serial: Int) -> String { "#xdr\(serial)q" }

  /// The fingerprints `line` shows to a session of `viewer`, in either
  /// wire format: chatbroker(7)'s lines or IRC's. Refusals show nothing
  /// (an `ERR` line; an IRC error numeric, NOTICE or FAIL): they name what
  /// was asked, not what is.
  public static func shown(in line: [UInt8], viewer: String) -> [Fingerprint] {
    guard line.count >= 5, contains(line, "xd") else { return [] }
    let words = LineWords(line)
    guard !words.isRefusal else { return [] }
    var shown = tokens(in: line, marker: "xdt").map { Fingerprint.text($0) }
    for room in Set(tokens(in: line, marker: "#xdr").map { "#xdr" + $0.dropFirst(3) }) {
      if words.lists(room) {
        shown += [.room(room), .roomFor(room, user: viewer)]
      }
      if let (changes, arguments) = words.modes(of: room) {
        var adding = true
        for letter in changes {
          switch letter {
          case "+": adding = true
          case "-": adding = false
          case "i", "m", "n", "s", "t": if adding { shown.append(.mode(room, letter: letter)) }
          default: break
          }
        }
        // Only a limit is a number among the arguments: a key is no
        // number (it holds a token), nor is a mask or a user.
        if changes.contains("l") && !changes.hasPrefix("-") {
          shown += arguments.compactMap(Int.init).map { .limit(room, $0) }
        }
      }
    }
    return shown
  }

  /// Each `marker` followed by digits and `q` in `line`, as `marker` plus
  /// digits plus `q` (the marker's leading `#` dropped).
  private static func tokens(in line: [UInt8], marker: String) -> [String] {
    let marker = Array(marker.utf8)
    var found: [String] = []
    var index = 0
    while index + marker.count < line.count {
      guard line[index..<index + marker.count].elementsEqual(marker) else {
        index += 1
        continue
      }
      var end = index + marker.count
      while end < line.count, (0x30...0x39).contains(line[end]) { end += 1 }
      if end > index + marker.count, end < line.count, line[end] == UInt8(ascii: "q") {
        let start = marker.first == UInt8(ascii: "#") ? index + 1 : index
        found.append(String(decoding: line[start...end], as: UTF8.self))
      }
      index = end
    }
    return found
  }

  /// Whether `needle` is in `line`, found with memchr(3) and memcmp(3):
  /// most lines are not the oracle's, and every line a fuzzing session
  /// gets passes here.
  static func contains(_ line: [UInt8], _ needle: StaticString) -> Bool {
    let length = needle.utf8CodeUnitCount
    let first = Int32(needle.utf8Start.pointee)
    return line.withUnsafeBytes { haystack in
      guard var at = haystack.baseAddress, haystack.count >= length else { return false }
      let end = at + haystack.count
      while end - at >= length, let match = memchr(at, first, end - at) {
        let found = UnsafeRawPointer(match)
        if end - found < length { return false }
        if memcmp(found, needle.utf8Start, length) == 0 { return true }
        at = found + 1
      }
      return false
    }
  }
}

/// A broker line split as chatbroker(7) and IRC both write it: IRC's tags
/// and source dropped, then the command and fixed words up to a ` :`,
/// whose rest is one last word.
struct LineWords {
  let command: String
  let parameters: [String]
  let irc: Bool

  init(_ line: [UInt8]) {
    // IRC's CR of its CR LF, when the line was split at the LF.
    let line = line.last == 0x0D ? line.dropLast() : line[...]
    var text = Substring(String(decoding: line, as: UTF8.self))
    irc = text.first == "@" || text.first == ":"
    if text.first == "@" { text = text.drop { $0 != " " }.dropFirst() }
    if text.first == ":" { text = text.drop { $0 != " " }.dropFirst() }
    var words: [String] = []
    while !text.isEmpty {
      if text.first == ":" && !words.isEmpty {
        words.append(String(text.dropFirst()))
        break
      }
      let word = text.prefix { $0 != " " }
      if !word.isEmpty { words.append(String(word)) }
      text = text.dropFirst(word.count).drop { $0 == " " }
    }
    command = words.first ?? ""
    parameters = Array(words.dropFirst())
  }

  /// An answer that refuses: the line protocol's `ERR`, IRC's error
  /// numerics, its NOTICEs and FAILs.
  var isRefusal: Bool {
    if command == "ERR" || command == "NOTICE" || command == "FAIL" { return true }
    guard irc, let numeric = Int(command) else { return false }
    return numeric >= 400
  }

  /// Whether it lists `room` as a room that exists: ROOM, CONV and
  /// MEMBER lines; IRC's LIST (322), WHO (352) and NAMES (353) lines and
  /// CHATHISTORY TARGETS.
  func lists(_ room: String) -> Bool {
    switch command {
    case "ROOM", "CONV", "MEMBER": parameters.first == room
    case "322", "352": parameters.count > 1 && parameters[1] == room
    case "353": parameters.count > 2 && parameters[2] == room
    case "CHATHISTORY": parameters.count > 1 && parameters[0] == "TARGETS" && parameters[1] == room
    default: false
    }
  }

  /// The mode word and its arguments when it shows `room`'s modes: the
  /// line protocol's `OK MODE room modes ...` and `MODE room user changes
  /// ...`, IRC's `MODE room changes ...` and 324.
  func modes(of room: String) -> (String, [String])? {
    let rest: ArraySlice<String>
    switch command {
    case "OK" where parameters.first == "MODE" && parameters.count > 2 && parameters[1] == room:
      rest = parameters[2...]
    case "MODE" where !irc && parameters.count > 2 && parameters[0] == room:
      rest = parameters[2...]
    case "MODE" where irc && parameters.count > 1 && parameters[0] == room:
      rest = parameters[1...]
    case "324" where parameters.count > 2 && parameters[1] == room:
      rest = parameters[2...]
    default: return nil
    }
    guard let changes = rest.first, changes.first == "+" || changes.first == "-" else {
      return nil
    }
    return (changes, Array(rest.dropFirst()))
  }
}
