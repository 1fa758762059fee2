import Glibc
import LineProtocol

/// Group membership from the system's databases through NSS
/// (`getpwnam_r`, `getgrouplist`, `getgrgid_r`): the user's primary group
/// and every supplementary group, from `/etc/group`, LDAP or whatever
/// `nsswitch.conf` names. Nothing is cached: a user removed from a group
/// is out of it at the next lookup (chatbroker(7), "Private rooms").
public final class SystemGroups: GroupDirectory {
  public init() {}

  public func groups(of user: String) -> Set<String> {
    guard let primary = primaryGroup(of: user) else { return [] }
    var count: Int32 = 64
    var ids = [gid_t](repeating: 0, count: Int(count))
    while getgrouplist(user, primary, &ids, &count) == -1 {
      // Too small: `count` now says how many there are.
      guard count > Int32(ids.count), count < 65536 else { return [] }
      ids = [gid_t](repeating: 0, count: Int(count))
    }
    return Set(ids.prefix(Int(count)).compactMap(groupName))
  }

  private func primaryGroup(of user: String) -> gid_t? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwnam_r(user, &entry, &buffer, buffer.count, &result) == 0, result != nil else {
      return nil
    }
    return entry.pw_gid
  }

  private func groupName(_ id: gid_t) -> String? {
    var entry = group()
    var result: UnsafeMutablePointer<group>?
    var size = 4096
    while true {
      var buffer = [CChar](repeating: 0, count: size)
      let status = getgrgid_r(id, &entry, &buffer, buffer.count, &result)
      if status == ERANGE && size < 1 << 20 {
        size *= 4
        continue
      }
      guard status == 0, result != nil, let name = entry.gr_name else { return nil }
      return String(cString: name)
    }
  }
}
