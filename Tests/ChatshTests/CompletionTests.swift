import ChatClient
import Foundation
import TestSupport
import Testing

/// The shell completions (completions/) offer every command and option that
/// chatsh's usage (chatsh --help, the SYNOPSIS of chatsh(1)) lists, so the
/// two cannot drift apart again.
@Suite struct CompletionTests {
  /// Each command of the synopsis with the options its line shows.
  static let commands: [(name: String, options: [String])] = Usage.synopsis.split(
    separator: "\n"
  ).compactMap { line in
    let words = line.split(separator: " ").map {
      String($0.trimmingCharacters(in: .init(charactersIn: "[]|")))
    }
    guard let chatsh = words.firstIndex(of: "chatsh"), words.count > chatsh + 3,
      words[chatsh + 1] == "--socket", words[chatsh + 3].first?.isLowercase == true
    else { return nil }
    let options = words[(chatsh + 4)...].filter { $0.hasPrefix("-") }
    return (words[chatsh + 3], options)
  }

  /// The long options of the general usage's "options:" list.
  static let general: [String] = Usage.general.split(separator: "\n").compactMap { line in
    line.split(separator: " ").first { $0.hasPrefix("--") }.map(String.init)
      .flatMap { line.hasPrefix("  -") ? $0 : nil }
  }

  @Test("the usage lists what the completions are compared with")
  func tableRead() {
    #expect(Self.commands.map(\.name).contains("search"))
    #expect(Self.commands.first { $0.name == "tail" }?.options.contains("--mentions") == true)
    #expect(Set(Self.general).isSuperset(of: ["--socket", "--trust-user", "--help", "--version"]))
  }

  /// What bash completes for the words (the last one being completed),
  /// with completions/chatsh.bash loaded as bash-completion loads it.
  func bash(_ words: [String]) throws -> Set<String> {
    let script = """
      source '\(Repository.path("completions/chatsh.bash"))'
      compopt() { :; }
      COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " ")))
      COMP_CWORD=\(words.count - 1)
      _chatsh
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let result = try runCommand(["/bin/bash", "--norc", "-c", script])
    #expect(result.status == 0, "\(result.errors)")
    return Set(result.output.split(separator: "\n").map(String.init))
  }

  @Test("bash: every command, each command's options and the general ones are offered")
  func bashOffersEverything() throws {
    let offered = try bash(["chatsh", ""])
    for command in Self.commands {
      #expect(offered.contains(command.name), "bash does not offer \(command.name)")
    }
    let top = try bash(["chatsh", "-"])
    for option in Self.general {
      #expect(top.contains(option), "bash does not offer \(option)")
    }
    for command in Self.commands {
      let options = try bash(["chatsh", command.name, "-"])
      for option in command.options + ["--socket", "--trust-user", "--help"] {
        #expect(options.contains(option), "bash: chatsh \(command.name) does not offer \(option)")
      }
    }
  }

  @Test("zsh: every command, each command's options and the general ones are in _chatsh")
  func zshOffersEverything() throws {
    let script = try String(
      contentsOfFile: Repository.path("completions/_chatsh"), encoding: .utf8)
    for option in Self.general {
      #expect(script.contains(option + "[") || script.contains(option + "}'["), "zsh: \(option)")
    }
    for command in Self.commands {
      #expect(script.contains("'\(command.name):"), "zsh does not offer \(command.name)")
      // The command's branch of `case $words[1]`, up to its `;;`.
      let lines = script.components(separatedBy: "\n")
      let start = lines.firstIndex { line in
        let pattern = line.trimmingCharacters(in: .whitespaces)
        guard pattern.hasSuffix(")") else { return false }
        let names = pattern.dropLast().components(separatedBy: " | ")
        return names.contains(command.name) && names.allSatisfy { $0.allSatisfy(\.isLowercase) }
      }
      var branch = ""
      for line in lines[(start ?? lines.endIndex)...] {
        branch += line + "\n"
        if line.contains(";;") { break }
      }
      for option in command.options {
        #expect(
          branch.contains("'\(option)[") || branch.contains(")\(option)["),
          "zsh: chatsh \(command.name) does not offer \(option)")
      }
    }
  }
}
