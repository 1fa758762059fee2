import Glibc

/// One IRC message (modern.ircdocs.horse, "Messages"; IRCv3 message-tags):
/// `[@tags ][:source ]<command>[ <params>][ :<trailing>]`, without its CRLF.
public struct IRCMessage: Equatable, Sendable {
  public var tags: [IRCTag]
  public var source: String?
  public var command: String
  public var parameters: [String]

  public init(
    tags: [IRCTag] = [], source: String? = nil, _ command: String, _ parameters: [String] = []
  ) {
    self.tags = tags
    self.source = source
    self.command = command
    self.parameters = parameters
  }

  /// The most bytes of a message without its tags, CRLF included.
  public static let maximumBytes = 512
  /// The most bytes of the tags a client may send, `@` and space included.
  public static let maximumClientTagBytes = 4096

  /// Reads one line (without CR LF); nil when it holds no command. Spaces
  /// between parameters may repeat, as servers must accept.
  public init?(parsing line: String) {
    var rest = Substring(line)
    func word() -> Substring {
      while rest.first == " " { rest.removeFirst() }
      let end = rest.firstIndex(of: " ") ?? rest.endIndex
      defer { rest = rest[end...] }
      return rest[..<end]
    }
    tags = []
    if rest.first == "@" {
      let field = word().dropFirst()
      tags = field.split(separator: ";").map { IRCTag(parsing: $0) }
    }
    while rest.first == " " { rest.removeFirst() }
    if rest.first == ":" {
      source = String(word().dropFirst())
    } else {
      source = nil
    }
    let command = word()
    guard !command.isEmpty else { return nil }
    self.command = command.uppercased()
    parameters = []
    while true {
      while rest.first == " " { rest.removeFirst() }
      if rest.isEmpty { break }
      if rest.first == ":" {
        parameters.append(String(rest.dropFirst()))
        break
      }
      parameters.append(String(word()))
    }
  }

  /// The message as bytes, CR LF included. The last parameter is written
  /// after ` :` when it must be (empty, holds a space, starts with `:`) or
  /// when `trailing` asks for it, as clients expect for texts.
  public func encoded(trailing: Bool = false) -> [UInt8] {
    var bytes: [UInt8] = []
    // Plain loops over indices: a history of long lines encodes thousands
    // of these a request, and generic iterators cost a metadata lookup
    // each in builds without optimisation.
    var size = 64
    for index in 0..<parameters.count { size += parameters[index].utf8.count }
    bytes.reserveCapacity(size)
    if !tags.isEmpty {
      bytes.append(UInt8(ascii: "@"))
      for index in 0..<tags.count {
        if index > 0 { bytes.append(UInt8(ascii: ";")) }
        tags[index].append(to: &bytes)
      }
      bytes.append(UInt8(ascii: " "))
    }
    if let source {
      bytes.append(UInt8(ascii: ":"))
      bytes.append(contentsOf: source.utf8)
      bytes.append(UInt8(ascii: " "))
    }
    bytes.append(contentsOf: command.utf8)
    for index in 0..<parameters.count {
      let parameter = parameters[index]
      bytes.append(UInt8(ascii: " "))
      if index == parameters.count - 1
        && (trailing || parameter.isEmpty || parameter.first == ":"
          || parameter.utf8.contains(UInt8(ascii: " ")))
      {
        bytes.append(UInt8(ascii: ":"))
      }
      bytes.append(contentsOf: parameter.utf8)
    }
    // The last guard of the wire: whatever a caller put in, a CR, LF or
    // NUL never ends this line early or starts another (cleaned() makes
    // replies that quote a client readable; this only keeps the framing).
    bytes.withUnsafeMutableBytes { line in
      guard let base = line.baseAddress else { return }
      for byte: Int32 in [13, 10, 0] {
        var at = base
        while let found = memchr(at, byte, line.count - (at - base)) {
          found.storeBytes(of: UInt8(ascii: " "), as: UInt8.self)
          at = UnsafeMutableRawPointer(found) + 1
        }
      }
    }
    bytes.append(contentsOf: [13, 10])
    return bytes
  }
}

/// One message tag: `key` or `key=value`, the value escaped on the wire as
/// the message-tags specification says.
public struct IRCTag: Equatable, Sendable {
  public var key: String
  public var value: String?

  public init(_ key: String, _ value: String? = nil) {
    self.key = key
    self.value = value
  }

  init(parsing field: Substring) {
    guard let equals = field.firstIndex(of: "=") else {
      key = String(field)
      value = nil
      return
    }
    key = String(field[..<equals])
    let raw = field[field.index(after: equals)...]
    value = raw.isEmpty ? nil : IRCTag.unescape(raw)
  }

  func append(to bytes: inout [UInt8]) {
    bytes.append(contentsOf: key.utf8)
    guard let value, !value.isEmpty else { return }
    bytes.append(UInt8(ascii: "="))
    // Times and ids, the tags of every line, have nothing to escape.
    var plain = true
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\\"), 13, 10: plain = false
      default: continue
      }
      break
    }
    if plain {
      bytes.append(contentsOf: value.utf8)
    } else {
      bytes.append(contentsOf: IRCTag.escape(value).utf8)
    }
  }

  /// `;` `\:`, space `\s`, `\` `\\`, CR `\r`, LF `\n`.
  public static func escape(_ value: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(value.utf8.count)
    for character in value.unicodeScalars {
      switch character {
      case ";": escaped += "\\:"
      case " ": escaped += "\\s"
      case "\\": escaped += "\\\\"
      case "\r": escaped += "\\r"
      case "\n": escaped += "\\n"
      default: escaped.unicodeScalars.append(character)
      }
    }
    return escaped
  }

  /// The reverse of ``escape(_:)``; a `\` before any other character is
  /// dropped, and a lone `\` at the end too, as the specification says.
  public static func unescape<S: StringProtocol>(_ value: S) -> String {
    var result = ""
    var escaping = false
    for character in value.unicodeScalars {
      if escaping {
        switch character {
        case ":": result += ";"
        case "s": result += " "
        case "\\": result += "\\"
        case "r": result += "\r"
        case "n": result += "\n"
        default: result.unicodeScalars.append(character)
        }
        escaping = false
      } else if character == "\\" {
        escaping = true
      } else {
        result.unicodeScalars.append(character)
      }
    }
    return result
  }
}
