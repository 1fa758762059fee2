import Broker
import Foundation
import NatsLink

/// The options that share rooms with other hosts (chatbroker(8),
/// "FEDERATION").
struct FederationOptions {
  var servers: [String] = []
  var node: String?
  var user: String?
  var password: String?
  var token: String?
  var credentialsFile: String?
  var patterns: [String] = []
  var replicas = 3

  static let names: Set<String> = [
    "--nats", "--node", "--nats-user", "--nats-password", "--nats-token", "--nats-creds",
    "--share", "--nats-replicas",
  ]

  /// Reads one option's value; an error text (what is wrong, what would be
  /// right) when it is not acceptable.
  mutating func set(_ option: String, _ value: String) -> String? {
    switch option {
    case "--nats":
      let urls = value.split(separator: ",").map { String($0) }
      guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("nats://") || $0.hasPrefix("tls://") })
      else { return "one or more URLs such as nats://127.0.0.1:4222, separated by commas" }
      servers += urls
    case "--node":
      let name = value.lowercased()
      guard FederationSettings.isValidNode(name) else {
        return "a node name of 1 to 32 of a-z 0-9 _ -"
      }
      node = name
    case "--nats-user": user = value
    case "--nats-password": password = value
    case "--nats-token": token = value
    case "--nats-creds":
      guard !value.isEmpty else { return "the path of a NATS credentials file" }
      credentialsFile = value
    case "--share":
      let patterns = value.split(separator: ",").map { String($0) }
      guard !patterns.isEmpty, patterns.allSatisfy({ $0.hasPrefix("#") }) else {
        return "room name patterns such as #ops or '#team-*', separated by commas"
      }
      self.patterns += patterns.map { $0.lowercased() }
    default:
      guard let number = Int(value), (1...5).contains(number) else {
        return "a number of replicas from 1 to 5"
      }
      replicas = number
    }
    return nil
  }

  /// Options that only make sense together; an error text when they clash.
  func check() -> String? {
    let given = [user != nil, token != nil, credentialsFile != nil].filter { $0 }.count
    if given > 1 { return "--nats-user, --nats-token and --nats-creds exclude each other" }
    if password != nil && user == nil { return "--nats-password needs --nats-user" }
    if servers.isEmpty
      && (!patterns.isEmpty || node != nil || given > 0 || password != nil)
    {
      return "--share, --node and the NATS credentials need --nats"
    }
    return nil
  }

  /// This host's node name: `--node`, or the first label of the host name.
  var nodeName: String {
    if let node { return node }
    let host = ProcessInfo.processInfo.hostName.lowercased()
    let label = String(host.prefix { $0 != "." })
    let cleaned = String(
      label.map { FederationSettings.isValidNode(String($0)) ? $0 : "-" }.prefix(32))
    return FederationSettings.isValidNode(cleaned) ? cleaned : "host"
  }

  var settings: FederationSettings? {
    servers.isEmpty ? nil : FederationSettings(node: nodeName, patterns: patterns)
  }

  var linkConfiguration: NatsLink.Configuration {
    var configuration = NatsLink.Configuration(servers: servers, node: nodeName)
    configuration.user = user
    configuration.password = password
    configuration.token = token
    configuration.credentialsFile = credentialsFile
    configuration.replicas = replicas
    return configuration
  }
}
