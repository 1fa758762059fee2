"""irctest's InspIRCd controller as tools/irctest runs it, for Debian's
inspircd package: as root (the chatbroker controller connects its clients
as Unix users, which needs root), where InspIRCd refuses to start without
--runasroot, and with the help file where Debian puts the examples.
Nothing else changes; irctest itself is not copied here.
"""

from irctest.controllers import inspircd

inspircd.TEMPLATE_V3_CONFIG = inspircd.TEMPLATE_V3_CONFIG.replace(
    '<include file="examples/helpop.conf.example">',
    '<include file="/usr/share/doc/inspircd/examples/helpop.conf.example">',
)


class DebianInspircdController(inspircd.InspircdController):
    def execute(self, command, **kwargs):
        command = list(command)
        if command and command[0] == "inspircd":
            command.append("--runasroot")
        return super().execute(command, **kwargs)


def get_irctest_controller_class():
    return DebianInspircdController
