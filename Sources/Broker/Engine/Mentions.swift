import Glibc

/// Who a message mentions (chatbroker(7), "Your rooms and read markers"): every
/// `@name` that stands as a word, and a `name:` the text starts with.
enum Mentions {
  static func names(in text: String) -> Set<Substring> {
    // Most lines mention nobody: without an `@`, only a leading `name:`
    // can be one. Every message of a replay passes here (measured: a
    // tenth of start-up on a million records before this check), and
    // memchr finds neither byte faster than a loop finds the end of a
    // first word.
    let mayMention =
      text.utf8.withContiguousStorageIfAvailable { bytes in
        guard let base = bytes.baseAddress else { return false }
        if memchr(base, Int32(UInt8(ascii: "@")), bytes.count) != nil { return true }
        if memchr(base, Int32(UInt8(ascii: ":")), bytes.count) == nil { return false }
        var index = 0
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        return index > 0 && index < bytes.count && bytes[index] == UInt8(ascii: ":")
      } ?? true
    guard mayMention else { return [] }
    var names: Set<Substring> = []
    let utf8 = text.utf8
    // `name:` at the very start.
    var index = utf8.startIndex
    while index != utf8.endIndex, isNameByte(utf8[index]) { index = utf8.index(after: index) }
    if index != utf8.startIndex, index != utf8.endIndex, utf8[index] == UInt8(ascii: ":") {
      names.insert(Substring(utf8[utf8.startIndex..<index]))
    }
    // `@name`, not inside a word (`me@host` is no mention), ending at a
    // byte that is no name byte; a trailing `.` or `-` ends a sentence,
    // not the name (`thanks @bob.`).
    var previous: UInt8?
    index = utf8.startIndex
    while index != utf8.endIndex {
      let byte = utf8[index]
      let next = utf8.index(after: index)
      if byte == UInt8(ascii: "@"), previous.map({ !isNameByte($0) }) ?? true {
        var end = next
        while end != utf8.endIndex, isNameByte(utf8[end]) { end = utf8.index(after: end) }
        var last = end
        while last != next {
          let before = utf8.index(last, offsetBy: -1)
          guard utf8[before] == UInt8(ascii: ".") || utf8[before] == UInt8(ascii: "-") else {
            break
          }
          last = before
        }
        if last != next { names.insert(Substring(utf8[next..<last])) }
        previous = nil
        index = end
        if end != next { previous = utf8[utf8.index(end, offsetBy: -1)] }
        continue
      }
      previous = byte
      index = next
    }
    return names
  }

  /// A byte a login name may hold (chatbroker(7), "Names").
  private static func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."),
      UInt8(ascii: "-"), UInt8(ascii: "$"):
      true
    default: false
    }
  }
}
