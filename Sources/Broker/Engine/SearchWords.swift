import Foundation
import LineProtocol
import Synchronization

/// What `SEARCH` calls a word, and how it ignores case and accents
/// (chatbroker(7), `SEARCH`). A text is decomposed compatibly (Unicode
/// NFKD, so `ﬁ` is `fi` and `①` is `1`), its nonspacing marks (general
/// category Mn: the accents) are dropped, and every character is mapped to
/// its Unicode lower case, with `ß` as `ss` and `ς` as `σ` as Unicode's
/// case folding has them. A word is then a run of letters, numbers and
/// spacing marks (categories L, N, Mc and Me); everything else separates
/// words. The same folding serves the index and the request, so a message
/// is found exactly when each requested word is one of its words.
enum SearchWords {
  /// The longest word kept, in bytes of its folded UTF-8: a longer word in
  /// a message is not indexed, and a longer word in a request is `LIMIT`.
  static let maximumBytes = 64
  /// The most words one `SEARCH` may require.
  static let maximumPerRequest = 8

  /// The distinct folded words of `text`, each at most ``maximumBytes``,
  /// in the order they first appear.
  static func words(in text: String) -> [String] {
    var words: [String] = []
    var seen: Set<String> = []
    forEachWord(in: text) { word in
      guard word.utf8.count <= maximumBytes else { return }
      // A short message is checked by a scan, a long one by a set: a
      // 4 KiB line can hold two thousand words.
      if words.count < 32 {
        if !words.contains(word) { words.append(word) }
      } else {
        if seen.isEmpty { seen = Set(words) }
        if seen.insert(word).inserted { words.append(word) }
      }
    }
    return words
  }

  /// Why the words of a request cannot be searched for.
  struct Problem: Error {
    let code: ErrorCode
    let text: String
  }

  /// The words a request asks for, or why it cannot: none, too many, or
  /// one too long to be in the index.
  static func request(_ text: String) -> Result<[String], Problem> {
    var words: [String] = []
    var tooLong: String?
    forEachWord(in: text) { word in
      if word.utf8.count > maximumBytes { tooLong = tooLong ?? word }
      if !words.contains(word) { words.append(word) }
    }
    if tooLong != nil {
      return .failure(
        Problem(
          code: .limit,
          text: "a word is at most \(maximumBytes) bytes once folded; longer words are not indexed"
        ))
    }
    if words.isEmpty {
      return .failure(
        Problem(
          code: .syntax,
          text: "there is no word to search for: words are letters and digits; usage: "
            + Verb.search.syntax))
    }
    if words.count > maximumPerRequest {
      return .failure(
        Problem(
          code: .limit,
          text: "at most \(maximumPerRequest) words; leave out the commonest"))
    }
    return .success(words)
  }

  /// Calls `body` with each folded word of `text`, repeats included. Text
  /// that is all ASCII, nearly every line, is folded byte by byte; any
  /// other character is folded through ``folded(_:)``.
  private static func forEachWord(in text: String, _ body: (String) -> Void) {
    // Eight bytes at a time over the bytes in place: walking `utf8` one
    // byte at a time was a third of indexing a message (`perf record`).
    var utf8 = text
    if utf8.withUTF8({ isASCII($0) }) {
      forEachASCIIWord(in: text, body)
      return
    }
    var word = String.UnicodeScalarView()
    func end() {
      if !word.isEmpty { body(String(word)) }
      word.removeAll(keepingCapacity: true)
    }
    for scalar in text.unicodeScalars {
      if scalar.isASCII {
        switch scalar.value {
        case 0x61...0x7A, 0x30...0x39: word.append(scalar)
        case 0x41...0x5A: word.append(Unicode.Scalar(scalar.value | 0x20)!)
        default: end()
        }
        continue
      }
      for piece in folded(scalar) {
        if let piece { word.append(piece) } else { end() }
      }
    }
    end()
  }

  /// What one character folds to: its NFKD decomposition without
  /// nonspacing marks, each letter, number or spacing mark lower-cased,
  /// nil where a word ends (`½` is `1`, an end, `2`). Decomposing the
  /// characters one by one gives the NFKD of the whole text but for the
  /// order of combining marks, which matters only among the nonspacing
  /// ones, and those are dropped.
  private static func folded(_ scalar: Unicode.Scalar) -> [Unicode.Scalar?] {
    if let known = foldCache.withLock({ $0[scalar] }) { return known }
    var pieces: [Unicode.Scalar?] = []
    for part in String(scalar).decomposedStringWithCompatibilityMapping.unicodeScalars {
      switch part.properties.generalCategory {
      case .nonspacingMark:
        continue
      case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .decimalNumber, .letterNumber, .otherNumber, .spacingMark, .enclosingMark:
        switch part {
        case "ß", "ẞ": pieces += ["s", "s"]
        case "ς": pieces.append("σ")
        default:
          // A lower case can bring a mark of its own (`İ` is `i` and a dot).
          for lower in part.properties.lowercaseMapping.unicodeScalars
          where lower.properties.generalCategory != .nonspacingMark {
            pieces.append(lower)
          }
        }
      default:
        pieces.append(nil)
      }
    }
    foldCache.withLock { $0[scalar] = pieces }
    return pieces
  }

  /// The characters folded so far: Foundation's NFKD costs microseconds a
  /// call, and a history's texts use few distinct characters beyond ASCII.
  /// Bounded by the characters Unicode has.
  private static let foldCache = Mutex<[Unicode.Scalar: [Unicode.Scalar?]]>([:])

  private static func forEachASCIIWord(in text: String, _ body: (String) -> Void) {
    var utf8 = text
    utf8.withUTF8 { bytes in
      var word: [UInt8] = []
      word.reserveCapacity(16)
      for byte in bytes {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
          word.append(byte)
        case UInt8(ascii: "A")...UInt8(ascii: "Z"):
          word.append(byte | 0x20)
        default:
          if !word.isEmpty { body(String(decoding: word, as: UTF8.self)) }
          word.removeAll(keepingCapacity: true)
        }
      }
      if !word.isEmpty { body(String(decoding: word, as: UTF8.self)) }
    }
  }
}
