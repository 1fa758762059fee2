"""Prints the pass/fail/skip table of irctest runs (tools/irctest) as
Markdown: one column per server, one row per area, from the JUnit XML
files pytest wrote (argv: name=file ...)."""

import sys
import xml.etree.ElementTree as ElementTree

AREAS = [
    ("RFC core: registration, PING, QUIT, LUSERS, server queries",
     ["connection_registration", "pingpong", "quit", "lusers", "isupport", "info",
      "time", "links", "help", "kill", "oper", "wallops", "buffering", "readq",
      "regressions", "utf8", "umodes"]),
    ("RFC channels: JOIN, PART, NAMES, LIST, TOPIC, KICK, INVITE",
     ["channel", "join", "part", "names", "list", "topic", "kick", "invite",
      "channel_rename", "channel_forward"]),
    ("channel modes", ["chmodes"]),
    ("PRIVMSG, NOTICE, AWAY", ["messages", "away", "statusmsg"]),
    ("WHO, WHOIS, WHOWAS", ["who", "whois", "whowas"]),
]
OTHER = "IRCv3 cap, message-tags, echo-message, labeled-response, read-marker, others"


def area(classname: str) -> str:
    parts = classname.split(".")
    module = parts[2] if len(parts) > 2 and parts[1] == "server_tests" else ""
    for name, modules in AREAS:
        if module in modules:
            return name
    return OTHER


def counts(path: str) -> dict:
    result: dict = {}
    for case in ElementTree.parse(path).iter("testcase"):
        row = result.setdefault(area(case.get("classname", "")), [0, 0, 0])
        if case.find("skipped") is not None:
            row[2] += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            row[1] += 1
        else:
            row[0] += 1
    return result


def main() -> None:
    runs = [argument.split("=", 1) for argument in sys.argv[1:]]
    runs = [(name.replace("_", " "), path) for name, path in runs]
    tables = [(name, counts(path)) for name, path in runs]
    print("| area | tests | " + " | ".join(f"{name} P/F/S" for name, _ in tables) + " |")
    print("|---|---|" + "---|" * len(tables))
    totals = [[0, 0, 0] for _ in tables]
    for name in [area for area, _ in AREAS] + [OTHER]:
        cells = []
        tests = 0
        for index, (_, table) in enumerate(tables):
            row = table.get(name, [0, 0, 0])
            tests = max(tests, sum(row))
            totals[index] = [a + b for a, b in zip(totals[index], row)]
            cells.append("/".join(map(str, row)))
        print(f"| {name} | {tests} | " + " | ".join(cells) + " |")
    total = max(sum(row) for row in totals) if totals else 0
    print(f"| **total** | {total} | "
          + " | ".join("**" + "/".join(map(str, row)) + "**" for row in totals) + " |")


main()
