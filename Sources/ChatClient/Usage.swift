/// Usage texts, kept the same as the SYNOPSIS of chatsh(1).
public enum Usage {
  public static let synopsis = """
    usage: chatsh [--socket PATH] [#room | @user ...]
           chatsh [--socket PATH] say [--wait SECONDS] [--block | --notice | --reply ID | --at WHEN | --every RULE] TARGET [TEXT ...]
           chatsh [--socket PATH] history [-n N] [--json] TARGET
           chatsh [--socket PATH] search [-n N] [--json] [--room TARGET] WORDS ...
           chatsh [--socket PATH] thread [-n N] [--json] TARGET ID
           chatsh [--socket PATH] tail [-n N] [--json] [--mentions] TARGET ...
           chatsh [--socket PATH] scheduled [--json]
           chatsh [--socket PATH] cancel ID
           chatsh [--socket PATH] react TARGET ID REACTION
           chatsh [--socket PATH] unreact TARGET ID REACTION
           chatsh [--socket PATH] amend TARGET ID TEXT ...
           chatsh [--socket PATH] rooms [--json]
           chatsh [--socket PATH] who [--json] ROOM
           chatsh [--socket PATH] web [--revoke]
           chatsh --help | COMMAND --help | --version
    """

  public static let general = """
    chatsh: chat with the people on this host, or script the chat.

    \(synopsis)

    With no command and a terminal, chatsh opens the chat screen, joins the
    rooms named (or those open last time) and shows their latest messages;
    type /help there. A TARGET is a #room or @user.

    commands:
      say        send TEXT, or each line of standard input, to TARGET
      history    print the latest messages of TARGET
      search     print the messages you can read that hold all the WORDS
      thread     print a message and the replies to it
      tail       print messages of the TARGETs as they arrive
      scheduled  list your messages waiting to be sent
      cancel     cancel one of them by ID
      react      put a reaction (an emoji or a short word) on a message
      unreact    take your reaction off a message
      amend      change the text of a message you sent
      rooms      list the rooms and how many people are in each
      who        list the people in ROOM
      web        print a link that opens the chat in your browser

    options:
      -s, --socket PATH  the broker's socket (default: $CHATBROKER_SOCKET,
                         else \(SocketPath.system) if it exists,
                         else $XDG_RUNTIME_DIR/chatbroker/chatbroker.sock)
      --trust-user NAME  also believe a broker run by NAME, a login name or
                         uid (or those in $CHATBROKER_TRUST_USER); one run
                         by root, you or chatbroker is always believed
      --color WHEN       colour on the screen and in output: auto (default:
                         only on a terminal without NO_COLOR), always or never
      -h, --help         this text; chatsh COMMAND --help for one command
      -V, --version      the version

    Plain output is one line per item, fields separated by TAB: for messages
    TIME TARGET USER TEXT, TIME in RFC 3339 UTC; in TEXT a backslash is
    written \\\\, a TAB \\t, a line feed \\n, a carriage return \\r.
    --json prints JSON Lines.
    Exit status: 0 done, 1 the broker refused (its code and reason on
    standard error), 64 usage error, 69 no broker answers (or one run by
    a user not trusted).
    """

  public static func command(_ name: String) -> String {
    switch name {
    case "say":
      return """
        usage: chatsh say [--wait SECONDS] [--block | --notice | --reply ID | --at WHEN | --every RULE] TARGET [TEXT ...]

        Sends TEXT (the words joined by spaces) to TARGET, a #room or @user.
        Without TEXT, each line of standard input is one message, sent as it
        arrives; empty lines are skipped. Text with several lines is sent as
        several messages. Terminal escape sequences (colour, titles), BEL
        and backspace are removed, a line rewritten with carriage returns
        keeps its last part, and a line over 4096 bytes is split in several
        messages.

          --block     send all the text (the words, or all of standard input
                      once it ends) as one message of several lines, such as
                      a build's output; more than 100 lines or 4096 bytes go
                      as a few such messages, in order, and chatsh says so.
          --wait SECONDS
                      wait this long (default 60, 0: not at all) for a broker
                      that does not answer or went away; after it comes back,
                      lines it did not acknowledge are sent again, unless its
                      history shows they arrived. Exits 69 after that.

          --notice    send each message as a NOTICE: shown as any message, and
                      to IRC clients as a notice, which no bot answers; what a
                      script's news should be.

          --reply ID  each message answers message ID of TARGET (the ids
                      are in chatsh history --json); shown under a quote of
                      it, and to IRC clients with +draft/reply.
          --at WHEN   send later: 18:00 or 07:30:15 (the next time your clock
                      shows it, in your TZ), +90s, +10m, +1h30m, +1d,
                      @UNIXSECONDS or 2026-12-24T18:00:00+01:00. Prints the
                      ID (for chatsh cancel) and the due time.
          --every RULE
                      send again and again: daily@09:00, weekdays@09:00,
                      mon,wed@18:00, monthly:31@09:00 or every:15m, at your
                      clock's time (TZ) unless the rule names a zone, as in
                      weekdays@09:00/Europe/Berlin; optionally ending with
                      ,until:2027-03-01 or ,count:10. Prints the ID, the first
                      due time and the rule in full. See chatbroker(7).

        example: make 2>&1 | chatsh say '#builds'
                 make 2>&1 | chatsh say --block '#builds'
                 chatsh say --reply 42 '#ops' done, deployed
                 chatsh say --at 18:00 '#ops' deploy now
                 chatsh say --every weekdays@09:00 '#team' stand-up
        """
    case "history":
      return """
        usage: chatsh history [-n N] [--json] TARGET

        Prints the latest N messages (default 50, at most 1000) of TARGET,
        oldest first: TIME TARGET USER TEXT separated by TABs.

          -n N     how many messages
          --json   one JSON object per line: id, target, time, user, text
        """
    case "search":
      return """
        usage: chatsh search [-n N] [--json] [--room TARGET] WORDS ...

        Prints the newest N messages (default 20) that hold every one of
        the WORDS, in every room you may read and your direct conversations,
        newest first: TIME TARGET USER TEXT separated by TABs. Words match
        whole, whatever their case and accents (see chatbroker(7), SEARCH).
        Exits 1 when nothing matches.

          -n N            how many messages
          --json          one JSON object per line: id, target, time, user, text
          --room TARGET   only in TARGET, a #room or @user
        """
    case "thread":
      return """
        usage: chatsh thread [-n N] [--json] TARGET ID

        Prints message ID of TARGET, a #room or @user, then the first N
        replies to it (default 50, at most 1000), oldest first: TIME TARGET
        USER TEXT separated by TABs. Only direct replies: a reply to a reply
        has a thread of its own. Says on standard error when there are no
        replies yet, or more than N. Exits 1 when there is no such message
        you may read.

          -n N     how many replies
          --json   one JSON object per line, as history prints them
        """
    case "amend":
      return """
        usage: chatsh amend TARGET ID TEXT ...

        Changes the text of message ID of TARGET, one you sent, to TEXT (the
        words joined by spaces): everyone sees the new text, marked edited,
        and the old one is gone. Possible for 24 hours after sending, as
        taking it back is (chatbroker(7), AMEND). Exits 1 when the broker
        refuses.

        example: chatsh amend '#ops' 42 deploy at 18:00, not 17:00
        """
    case "tail":
      return """
        usage: chatsh tail [-n N] [--json] [--mentions] TARGET ...

        Joins the rooms among the TARGETs and prints each message to any of
        them as it arrives, until interrupted; interrupted, it first leaves
        the rooms that were not yours before it joined them. When the broker
        goes away, tail reconnects (after 1, 2, 3, 5, 10, 20, then every 30
        seconds), joins again and prints what was said meanwhile, each
        message once.

          -n N        first print the latest N messages of each TARGET
          --json      one JSON object per line: id, target, time, user, text
          --mentions  only messages for you: direct messages, and those that
                      name @you or start with "you:"; TARGETs may be left out
        """
    case "scheduled":
      return """
        usage: chatsh scheduled [--json]

        Lists your messages and series waiting to be sent, by due time:
        ID DUE TARGET TEXT separated by TABs (DUE in RFC 3339 UTC), and for
        a series its RULE as a fifth field, DUE being its next occurrence.

          --json   one JSON object per line: id, target, due, created, text,
                   and rule for a series
        """
    case "cancel":
      return """
        usage: chatsh cancel ID

        Cancels your scheduled message ID, or ends your series ID (see
        chatsh scheduled). Exits 1 when nothing pending of yours has that id.
        """
    case "react", "unreact":
      return """
        usage: chatsh react TARGET ID REACTION
               chatsh unreact TARGET ID REACTION

        Puts REACTION, an emoji or a short word (👍, +1, lol), on message ID
        of TARGET, a #room or @user; unreact takes yours off again. Each
        reaction counts once per person: putting one again, or taking off
        one that is not there, changes nothing and succeeds. The ids are
        in chatsh history --json. Exits 1 when there is no such message
        you may read, or you may not write to TARGET.

        example: chatsh react '#ops' 42 👍
        """
    case "rooms":
      return """
        usage: chatsh rooms [--json]

        Lists the rooms: ROOM MEMBERS separated by a TAB.
        """
    case "who":
      return """
        usage: chatsh who [--json] ROOM

        Lists the people in ROOM, one login name per line.
        """
    case "web":
      return """
        usage: chatsh web [--revoke]

        Prints a link, http://localhost:PORT/#k=TOKEN, that opens the chat
        in a browser through the broker's web door, and when its token
        expires (on standard error). From another machine, forward the
        port first: ssh -L PORT:localhost:PORT thishost. The token works
        for you only, for 7 days; keep the link to yourself. Exits 1 when
        the broker has no web door (see chatbroker(8), --web-listen).

          --revoke   end all your links instead, and close the pages open
                     with them
        """
    default:
      return general
    }
  }
}
