// The chat page of the web door (chatbroker(7), "The web door"): one more
// client of the line protocol, over a WebSocket, one line per frame. It
// keeps no state of its own beyond the tab: the token from the link
// (#k=...) in sessionStorage, and what the broker answers. Every text from
// the broker is put on the page with textContent, never parsed as HTML.
"use strict";
(function () {
  // ---------------------------------------------------------------- util

  const $ = (id) => document.getElementById(id);

  /** An element with a class and a text, both optional. */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  /** A button, `small` unless a class is given; "" for a full-size one. */
  function button(label, onClick, className) {
    const node = el("button", className ?? "small", label);
    node.type = "button";
    node.addEventListener("click", onClick);
    return node;
  }

  /** A broker line split as chatbroker(7) says: the words before the
   *  first " :", and the text after it (null when there is none). */
  function parseLine(line) {
    const colon = line.indexOf(" :");
    const head = colon >= 0 ? line.slice(0, colon) : line;
    return {
      words: head.split(" ").filter((word) => word !== ""),
      text: colon >= 0 ? line.slice(colon + 2) : null,
    };
  }

  /** A MSG or HIST line's message; words after the user it does not know
   *  are skipped, as chatbroker(7) asks. */
  function parseMessage(words, text) {
    const message = {
      target: words[1], id: words[2], time: words[3], user: words[4],
      text: text || "", action: false, redacted: false, series: null, replyTo: null, edited: false,
      reactions: [],
    };
    for (let index = 5; index < words.length; index++) {
      if (words[index] === "ACTION") message.action = true;
      else if (words[index] === "REDACTED") message.redacted = true;
      else if (words[index] === "SERIES") message.series = words[++index] || null;
      else if (words[index] === "REPLY") message.replyTo = words[++index] || null;
      else if (words[index] === "EDITED") message.edited = true;
      else if (words[index] === "REACTIONS") message.reactions = parseReactions(words[++index] || "");
      // Since 1.6, last: a text of several lines, \n and \\ escaped
      // (chatbroker(7), BLOCK).
      else if (words[index] === "BLOCK") message.text = unescapeBlock(message.text);
    }
    return message;
  }

  /** A block's text as the line protocol writes it: \\ a backslash, \n
   *  a line feed, any other backslash itself (chatbroker(7), BLOCK). */
  function unescapeBlock(written) {
    return written.replace(/\\(n|\\)/g, (_, escaped) => (escaped === "n" ? "\n" : "\\"));
  }

  /** The inverse: a text of several lines for a BLOCK request. */
  function escapeBlock(text) {
    return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
  }

  /** The most lines of one block, and of the bytes of a request line
   *  (chatbroker(7), BLOCK and "Transport and framing"). */
  const blockLines = 100;
  const lineBytes = 4096;

  /** A text's lines on one line, for a quote or a heading. */
  function oneLine(text) {
    return text.replace(/\n/g, " ↵ ");
  }

  /** HIST's REACTIONS word, 👍=bob+carol,lol=dave: each reaction with who
   *  put it, in the order they were first put (chatbroker(7), HIST). */
  function parseReactions(word) {
    return word.split(",").map((part) => {
      const equals = part.indexOf("=");
      return { reaction: part.slice(0, equals), users: part.slice(equals + 1).split("+").filter(Boolean) };
    }).filter((tally) => tally.reaction && tally.users.length);
  }

  /** A protocol text: no control characters (the broker refuses them). */
  function cleanText(text) {
    return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, " ");
  }

  const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
  const longFormat = new Intl.DateTimeFormat(undefined, {
    weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
  const weekdayFormat = new Intl.DateTimeFormat(undefined, { weekday: "long" });
  const dateFormat = new Intl.DateTimeFormat(undefined, { weekday: "long", year: "numeric", month: "long", day: "numeric" });
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

  function dayKey(date) {
    return date.getFullYear() + "-" + (date.getMonth() + 1) + "-" + date.getDate();
  }

  /** Today, Yesterday, a weekday within the week, else the date. */
  function dayLabel(date) {
    const today = new Date();
    const midnight = new Date(today.getFullYear(), today.getMonth(), today.getDate());
    const that = new Date(date.getFullYear(), date.getMonth(), date.getDate());
    const days = Math.round((midnight - that) / 86400000);
    if (days === 0) return "Today";
    if (days === 1) return "Yesterday";
    if (days > 1 && days < 7) return weekdayFormat.format(date);
    return dateFormat.format(date);
  }

  function timeElement(iso, format) {
    const node = el("time");
    const date = new Date(iso);
    node.dateTime = iso;
    node.textContent = (format || timeFormat).format(date);
    node.title = longFormat.format(date);
    return node;
  }

  /** Up to two letters for a login name: its parts' first letters, or its
   *  first letter and a trailing digit (cbtest1: C1). */
  function initials(name) {
    const parts = name.replace(/@.*$/, "").split(/[._\-\s]+/).filter(Boolean);
    if (parts.length >= 2) return (parts[0][0] + parts[1][0]).toUpperCase();
    const word = parts[0] || name || "?";
    const digit = /\d$/.test(word) && word.length > 1 ? word[word.length - 1] : "";
    return (word[0] + digit).toUpperCase();
  }

  /** A colour that stays the same for one user, on any page. */
  function userColour(name) {
    let hash = 0;
    for (const character of name) hash = (Math.imul(hash, 31) + character.codePointAt(0)) >>> 0;
    return "hsl(" + (hash % 360) + " 55% 40%)";
  }

  const linkPattern = /\bhttps?:\/\/[^\s<>"'`]+/gi;

  /** The link it is, when it is http or https; null otherwise. */
  function safeLink(text) {
    try {
      const url = new URL(text);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (error) {
      return null;
    }
  }

  /** Appends `text` to `node` as text, with its http(s) links as anchors
   *  built with the DOM, opened without the page as opener or referrer. */
  function appendText(node, text) {
    let last = 0;
    for (const match of text.matchAll(linkPattern)) {
      const raw = match[0].replace(/[.,;:!?)\]}]+$/, "");
      const href = safeLink(raw);
      if (!href) continue;
      node.append(text.slice(last, match.index));
      const anchor = el("a", null, raw);
      anchor.href = href;
      anchor.target = "_blank";
      anchor.rel = "noopener noreferrer";
      node.append(anchor);
      last = match.index + raw.length;
    }
    node.append(text.slice(last));
  }

  // --------------------------------------------------------- connection

  const tokenMatch = /[#&]k=([0-9A-Za-z_-]+)/.exec(location.hash);
  if (tokenMatch) {
    sessionStorage.setItem("token", tokenMatch[1]);
    history.replaceState(null, "", location.pathname);
  }
  const token = sessionStorage.getItem("token");

  let socket = null;
  let greeted = false;
  let attempts = 0;
  let stopped = false;
  /** Requests sent and not yet answered, in order: each gets exactly one
   *  OK or ERR, and the data lines before it belong to the first. */
  let pending = [];

  class RequestError extends Error {
    constructor(verb, code, text) {
      super(text);
      this.verb = verb;
      this.code = code;
    }
  }

  /** Sends one request line; resolves with its OK's words and data lines,
   *  rejects with its ERR. */
  function request(line) {
    return new Promise((resolve, reject) => {
      if (!socket || !greeted || socket.readyState !== WebSocket.OPEN) {
        reject(new RequestError("-", "OFFLINE", "not connected; trying again"));
        return;
      }
      pending.push({ resolve, reject, lines: [] });
      socket.send(line);
    });
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const opened = new WebSocket(scheme + location.host + "/ws", "chatbroker");
    socket = opened;
    greeted = false;
    opened.onopen = () => opened.send("TOKEN " + token);
    opened.onmessage = (event) => {
      if (socket === opened) receive(String(event.data));
    };
    opened.onclose = (event) => {
      if (socket !== opened) return;
      disconnected(event);
    };
  }

  function disconnected(event) {
    greeted = false;
    const failed = pending;
    pending = [];
    for (const waiting of failed) waiting.reject(new RequestError("-", "OFFLINE", "the connection closed"));
    setComposerEnabled(false);
    if (stopped || event.code === 1008) {
      stopped = true;
      setStatus((event.reason || "the broker refused this link") + "", true);
      return;
    }
    // Backoff with jitter: 0.5 s, 1 s, 2 s ... up to 30 s between tries.
    const delay = Math.min(30000, 500 * 2 ** attempts) * (0.75 + Math.random() / 4);
    attempts++;
    setStatus("disconnected; connecting again in " + Math.ceil(delay / 1000) + " s…", true);
    setTimeout(connect, delay);
  }

  function receive(line) {
    const { words, text } = parseLine(line);
    const kind = words[0];
    if (!greeted) {
      if (kind === "HELLO") {
        greeted = true;
        attempts = 0;
        me = words[2];
        $("me").textContent = me;
        synchronize();
      } else if (kind === "ERR") {
        stopped = true;
        setStatus(text || line, true);
      }
      return;
    }
    switch (kind) {
      case "OK":
      case "ERR": {
        const waiting = pending.shift();
        if (!waiting) return;
        if (kind === "OK") waiting.resolve({ words, text, lines: waiting.lines });
        else waiting.reject(new RequestError(words[1], words[2], text || ""));
        return;
      }
      case "HIST": case "ROOM": case "CONV": case "MEMBER": case "INFO": case "BAN":
        if (pending[0]) pending[0].lines.push({ words, text });
        return;
      case "SCHED":
        if (pending[0]) pending[0].lines.push({ words, text });
        scheduleChanged();
        return;
      case "MSG": return onMessage(parseMessage(words, text));
      case "TOPIC": return onTopic(words[1], words[2], words[3], text || "");
      case "JOIN": return notice(words[1], words[2] + " joined");
      case "PART": return notice(words[1], words[2] + " left");
      case "KICK": return onKick(words[1], words[2], words[3], text);
      case "INVITE": return onInvite(words[1], words[3]);
      case "MODE": return notice(words[1], words[2] + " set mode " + words.slice(3).join(" "));
      case "AWAY": return notice("@" + words[1], words[1] + " is away: " + (text || ""));
      case "REDACT": return onRedact(words[1], words[2]);
      case "AMEND": return onAmend(words[1], words[2], text || "");
      case "REACT": case "UNREACT": return onReact(words[1], words[2], words[3], words[4], kind === "UNREACT");
      case "MARKREAD": return onMarkRead(words[1], words[2]);
      case "BYE": setStatus(text || "the broker closed this page", true); return;
      default: return;
    }
  }

  // -------------------------------------------------------------- state

  let me = "";
  /** target -> conversation: its items (messages and notices) in the
   *  broker's order of delivery, and what the sidebar shows. */
  const conversations = new Map();
  let current = sessionStorage.getItem("current") || null;
  let noticeCount = 0;

  function conversation(target) {
    let conv = conversations.get(target);
    if (!conv) {
      conv = {
        target, items: [], ids: new Set(), loaded: false, complete: false, syncing: false,
        buffer: [], unread: 0, mentions: 0, read: "-", topic: "", mine: false, newAfter: null,
        loadingOlder: false,
      };
      conversations.set(target, conv);
    }
    return conv;
  }

  const isRoom = (target) => target.startsWith("#");

  function lastMessageId(conv) {
    for (let index = conv.items.length - 1; index >= 0; index--) {
      const item = conv.items[index];
      if (item.id && !item.pending) return item.id;
    }
    return null;
  }

  function firstMessageId(conv) {
    const item = conv.items.find((each) => each.id && !each.pending);
    return item ? item.id : null;
  }

  function mentionsMe(text) {
    if (!me) return false;
    const name = me.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp("(^|[^\\w@])@" + name + "(?![\\w@])").test(text) || text.startsWith(me + ":");
  }

  /** Adds a message unless its id is there already: a line seen twice,
   *  live and in a history after a reconnect, shows once. */
  function addMessage(conv, message, atStart) {
    if (conv.ids.has(message.id)) return false;
    conv.ids.add(message.id);
    if (atStart) conv.items.unshift(message);
    else conv.items.push(message);
    return true;
  }

  /** After a synchronizing HISTORY: its lines, then what came live
   *  meanwhile, each once. */
  function finishSync(conv, lines) {
    for (const line of lines) addMessage(conv, parseMessage(line.words, line.text));
    for (const message of conv.buffer) addMessage(conv, message);
    conv.buffer = [];
    conv.syncing = false;
  }

  // ------------------------------------------------------- synchronizing

  /** After every greeting: your conversations, joined again, and for each
   *  one already on the page every line after the last one it has. */
  async function synchronize() {
    setStatus("");
    try {
      const listed = await request("CONVERSATIONS");
      for (const { words } of listed.lines) {
        const conv = conversation(words[1]);
        conv.mine = true;
        conv.read = words[4];
        if (conv.target !== current || document.hidden) {
          conv.unread = Number(words[5]) || 0;
          conv.mentions = Number(words[6]) || 0;
        }
      }
      const resumes = [];
      for (const conv of conversations.values()) {
        if (isRoom(conv.target) && conv.mine) resumes.push(request("JOIN " + conv.target).catch(showError));
        if (conv.loaded) resumes.push(resume(conv));
      }
      await Promise.all(resumes);
      setComposerEnabled(true);
      renderSidebar();
      if (!current || !conversations.has(current)) {
        const first = conversations.keys().next();
        current = first.done ? null : first.value;
      }
      if (current) await open(current);
      else renderAll();
      refreshRooms();
    } catch (error) {
      showError(error);
    }
  }

  async function resume(conv) {
    let after = lastMessageId(conv);
    conv.syncing = true;
    conv.buffer = [];
    const lines = [];
    try {
      if (!after) {
        const answer = await request("HISTORY " + conv.target + " 100");
        lines.push(...answer.lines);
      } else {
        const shown = conv.items.filter((item) => !item.notice).length;
        for (;;) {
          const answer = await request("HISTORY " + conv.target + " 1000 AFTER " + after);
          lines.push(...answer.lines);
          if (answer.lines.length < 1000) break;
          after = answer.lines[answer.lines.length - 1].words[2];
        }
        // The latest lines again, as many as are shown: what changed on
        // them while the page was away.
        const latest = await request("HISTORY " + conv.target + " " + Math.min(Math.max(shown, 1), 1000));
        refreshShown(conv, latest.lines);
      }
    } catch (error) {
      if (error.code === "OFFLINE") {
        conv.syncing = false;
        return;
      }
      // The last message is no longer kept: the latest ones, each once.
      const answer = await request("HISTORY " + conv.target + " 200").catch(() => ({ lines: [] }));
      lines.push(...answer.lines);
    }
    finishSync(conv, lines);
    if (conv.target === current) renderMessages();
  }

  /** The lines shown as the broker has them now, after a reconnect: a
   *  text changed (AMEND), reactions, a line taken back (REDACT). Lines
   *  not shown are left to the history after the last one. */
  function refreshShown(conv, lines) {
    const shown = new Map();
    for (const item of conv.items) if (!item.notice) shown.set(item.id, item);
    for (const line of lines) {
      const now = parseMessage(line.words, line.text);
      const item = shown.get(now.id);
      if (!item) continue;
      item.redacted = now.redacted;
      item.text = now.text;
      item.edited = now.edited;
      item.reactions = now.reactions;
    }
  }

  /** Shows a conversation: its latest lines the first time, reaching back
   *  to the read marker so that the "new" line has its place. */
  async function open(target) {
    const conv = conversation(target);
    if (current !== target) {
      const before = conversations.get(current);
      if (before) before.newAfter = null;
      stopReply();
    }
    current = target;
    sessionStorage.setItem("current", target);
    if (conv.newAfter === null && conv.unread > 0) conv.newAfter = conv.read;
    $("sidebar").classList.remove("open");
    $("menu").setAttribute("aria-expanded", "false");
    renderAll();
    if (!conv.loaded) {
      conv.loaded = true;
      conv.syncing = true;
      conv.buffer = [];
      const count = Math.min(1000, Math.max(50, conv.unread + 20));
      try {
        const answer = await request("HISTORY " + target + " " + count);
        const live = conv.items;
        conv.items = [];
        conv.ids = new Set();
        for (const line of answer.lines) addMessage(conv, parseMessage(line.words, line.text));
        // What came while the history was asked for is newer than it.
        for (const item of live) {
          if (item.id && conv.ids.has(item.id)) continue;
          conv.items.push(item);
          if (item.id) conv.ids.add(item.id);
        }
        conv.complete = answer.lines.length < count;
        finishSync(conv, []);
      } catch (error) {
        conv.loaded = false;
        conv.syncing = false;
        showError(error);
      }
      if (isRoom(target) && !conv.mine) {
        // A room from the list of all rooms: join it, as chatsh does.
        await request("JOIN " + target).then(() => (conv.mine = true)).catch(showError);
      }
    }
    if (current === target) {
      renderAll({ toNew: true });
      markRead(conv);
    }
  }

  async function loadOlder() {
    const conv = conversations.get(current);
    if (!conv || !conv.loaded || conv.complete || conv.loadingOlder) return;
    const oldest = firstMessageId(conv);
    if (!oldest) return;
    conv.loadingOlder = true;
    try {
      const answer = await request("HISTORY " + conv.target + " 100 BEFORE " + oldest);
      for (let index = answer.lines.length - 1; index >= 0; index--) {
        addMessage(conv, parseMessage(answer.lines[index].words, answer.lines[index].text), true);
      }
      conv.complete = answer.lines.length < 100;
    } catch (error) {
      showError(error);
    }
    conv.loadingOlder = false;
    if (conv.target === current) renderMessages({ keepFromBottom: true });
  }

  let markTimer = null;

  /** Moves the read marker to the newest line shown, when it is seen. */
  function markRead(conv) {
    if (document.hidden || conv.target !== current) return;
    const newest = lastMessageId(conv);
    conv.unread = 0;
    conv.mentions = 0;
    renderSidebar();
    if (!newest || newest === conv.read) return;
    clearTimeout(markTimer);
    markTimer = setTimeout(() => {
      request("MARKREAD " + conv.target + " " + newest)
        .then((answer) => (conv.read = answer.words[3] || newest))
        .catch(() => {});
    }, 300);
  }

  // ------------------------------------------------------------- events

  function onMessage(message) {
    threadMessage(message);
    const conv = conversation(message.target);
    if (conv.syncing) {
      conv.buffer.push(message);
      return;
    }
    if (!addMessage(conv, message)) return;
    const fromOther = message.user !== me;
    const seen = message.target === current && !document.hidden;
    if (fromOther && !seen) {
      conv.unread++;
      const mention = !isRoom(message.target) || mentionsMe(message.text);
      if (mention) {
        conv.mentions++;
        if (document.hidden) notify(message);
      }
      if (message.target === current && conv.newAfter === null) conv.newAfter = conv.read;
    }
    if (message.target === current) {
      renderMessages();
      markRead(conv);
    }
    renderSidebar();
  }

  function onTopic(room, user, time, text) {
    const conv = conversation(room);
    const changed = conv.topic !== text && conv.topicSet !== time;
    conv.topic = text;
    conv.topicSet = time;
    if (changed && conv.loaded && time) {
      conv.items.push({ notice: true, time, text: text ? user + " set the topic: " + text : user + " cleared the topic" });
    }
    if (room === current) renderAll();
  }

  function onKick(room, user, by, reason) {
    notice(room, by + " removed " + user + (reason ? ": " + reason : ""));
    if (user === me) {
      const conv = conversation(room);
      conv.mine = false;
      renderSidebar();
    }
  }

  /** INVITE room user by: you were invited (chatbroker(7)); the room is
   *  listed under Rooms from now on, a click away. */
  function onInvite(room, by) {
    setStatus(by + " invited you to " + room + ": open it under Rooms to join", true);
    notice(room, by + " invited you");
    refreshRooms();
  }

  function onRedact(target, id) {
    threadChanged(target, id, (item) => {
      item.redacted = true;
      item.text = "";
    });
    const conv = conversations.get(target);
    if (!conv) return;
    const item = conv.items.find((each) => each.id === id);
    if (item) {
      item.redacted = true;
      item.text = "";
      if (target === current) renderMessages();
    }
  }

  /** Its author gave a message a new text (chatbroker(7), AMEND). */
  function onAmend(target, id, text) {
    threadChanged(target, id, (item) => {
      item.text = text;
      item.edited = true;
    });
    const conv = conversations.get(target);
    const item = conv && conv.items.find((each) => each.id === id && !each.notice);
    if (!item) return;
    item.text = text;
    item.edited = true;
    if (target === current) renderMessages();
  }

  /** Someone put a reaction on a message or took it off (chatbroker(7),
   *  REACT): only its chips change; it is never unread. */
  function onReact(target, id, user, reaction, removed) {
    const conv = conversations.get(target);
    const item = conv && [...conv.items, ...conv.buffer].find((each) => each.id === id && !each.notice);
    if (!item || !reaction || !react(item, user, reaction, removed)) return;
    if (target === current) renderMessages();
  }

  /** Puts `user`'s reaction on `item` or takes it off; whether it changed. */
  function react(item, user, reaction, removed) {
    const tallies = (item.reactions = item.reactions || []);
    const tally = tallies.find((each) => each.reaction === reaction);
    if (removed ? !tally || !tally.users.includes(user) : tally && tally.users.includes(user)) return false;
    if (!tally) tallies.push({ reaction, users: [user] });
    else if (!removed) tally.users.push(user);
    else if (tally.users.length > 1) tally.users.splice(tally.users.indexOf(user), 1);
    else tallies.splice(tallies.indexOf(tally), 1);
    return true;
  }

  function onMarkRead(target, id) {
    const conv = conversation(target);
    conv.read = id;
    if (id === lastMessageId(conv)) {
      conv.unread = 0;
      conv.mentions = 0;
    }
    renderSidebar();
  }

  /** A line about the conversation that is no message: joins, topics. */
  function notice(target, text) {
    const conv = conversation(target);
    if (!conv.loaded) return;
    conv.items.push({ notice: true, time: new Date().toISOString(), text, key: "n" + noticeCount++ });
    if (target === current) renderMessages();
  }

  // ------------------------------------------------------ notifications

  const canNotify = "Notification" in window;

  function notify(message) {
    if (!canNotify || Notification.permission !== "granted") return;
    const title = isRoom(message.target) ? message.user + " in " + message.target : message.user;
    const shown = new Notification(title, { body: message.text, tag: message.target });
    shown.onclick = () => {
      window.focus();
      open(message.target);
      shown.close();
    };
  }

  function renderNotify() {
    const control = $("notify");
    if (!canNotify) {
      control.hidden = true;
      return;
    }
    const granted = Notification.permission === "granted";
    control.textContent = granted ? "Notifications on" : Notification.permission === "denied" ? "Notifications blocked" : "Notify me";
    control.setAttribute("aria-pressed", granted ? "true" : "false");
    control.disabled = Notification.permission !== "default";
  }

  // ----------------------------------------------------------- sidebar

  function convButton(conv, label, count, onClick) {
    const item = el("li");
    const control = el("button", null);
    control.type = "button";
    control.dataset.target = conv.target;
    if (conv.target === current) control.setAttribute("aria-current", "true");
    control.append(el("span", "name", label));
    if (count !== null) control.append(el("span", "count", count));
    if (conv.unread > 0) {
      item.className = "unread";
      const badge = el("span", conv.mentions > 0 ? "badge mention" : "badge", String(conv.unread));
      badge.setAttribute("aria-label", conv.unread + " unread" + (conv.mentions ? ", " + conv.mentions + " for you" : ""));
      control.append(badge);
    }
    control.addEventListener("click", onClick);
    item.append(control);
    return item;
  }

  let allRooms = [];

  function renderSidebar() {
    const list = $("conversations");
    const mine = [...conversations.values()]
      .filter((conv) => conv.mine || !isRoom(conv.target) || conv.target === current)
      .sort((a, b) => (isRoom(b.target) - isRoom(a.target)) || a.target.localeCompare(b.target));
    list.replaceChildren(...mine.map((conv) => convButton(conv, conv.target, null, () => open(conv.target))));
    const rooms = $("rooms");
    rooms.replaceChildren(
      ...allRooms.map((room) => {
        const item = convButton({ target: room.name, unread: 0 }, room.name, room.members, () => open(room.name));
        if (room.topic) item.firstChild.title = room.topic;
        return item;
      }));
    const total = [...conversations.values()].reduce((sum, conv) => sum + conv.unread, 0);
    document.title = (total ? "(" + total + ") " : "") + (current ? current + " – " : "") + "chatbroker";
  }

  async function refreshRooms() {
    const rooms = [];
    let after = "";
    try {
      for (;;) {
        const answer = await request("ROOMS" + (after ? " AFTER " + after : ""));
        for (const { words, text } of answer.lines) rooms.push({ name: words[1], members: words[2], topic: text || "" });
        if (answer.words[3] !== "MORE" || !answer.lines.length) break;
        after = rooms[rooms.length - 1].name;
      }
      allRooms = rooms;
      renderSidebar();
    } catch (error) {
      showError(error);
    }
  }

  // ---------------------------------------------------------- messages

  function renderAll(options) {
    renderSidebar();
    renderHeader();
    renderMessages(options);
  }

  function renderHeader() {
    const conv = current ? conversations.get(current) : null;
    $("title").textContent = current || "chatbroker";
    $("topic").textContent = conv && conv.topic ? conv.topic : "";
    $("topic").title = conv && conv.topic ? conv.topic : "";
    $("topic-edit").hidden = !(current && isRoom(current));
  }

  /** Builds the conversation again: day separators, the "new" line,
   *  bubbles grouped by author, actions and notices. */
  function renderMessages(options) {
    const box = $("messages");
    const conv = current ? conversations.get(current) : null;
    const fromBottom = box.scrollHeight - box.scrollTop;
    const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 60;
    const nodes = [];
    if (!conv) {
      nodes.push(el("p", "notice", greeted ? "Join a room or write to someone to start." : ""));
      box.replaceChildren(...nodes);
      return;
    }
    if (conv.loaded && !conv.complete) nodes.push(button("Load older messages", loadOlder, "small older"));
    let day = null;
    let group = null;
    let previous = null;
    let markerPassed = conv.newAfter === "-";
    let newLine = null;
    for (const item of conv.items) {
      const date = new Date(item.time);
      if (dayKey(date) !== day) {
        day = dayKey(date);
        const separator = el("div", "day", dayLabel(date));
        separator.setAttribute("role", "separator");
        separator.dataset.day = day;
        nodes.push(separator);
        group = null;
      }
      if (markerPassed && !newLine && item.id && !item.pending && item.user !== me && conv.newAfter !== null) {
        newLine = el("div", "new-line", "new");
        newLine.setAttribute("role", "separator");
        newLine.setAttribute("aria-label", "new messages");
        nodes.push(newLine);
        group = null;
      }
      if (item.id === conv.newAfter) markerPassed = true;
      if (item.notice) {
        const line = el("div", "notice", item.text);
        line.setAttribute("role", "note");
        line.append(timeElement(item.time));
        nodes.push(line, ...chips(item));
        group = null;
        continue;
      }
      if (item.action && !item.redacted) {
        const line = el("div", "action");
        line.dataset.id = item.id;
        line.append("* " + item.user + " ");
        appendText(line, item.text);
        line.append(timeElement(item.time));
        nodes.push(line);
        group = null;
        continue;
      }
      const mine = item.user === me;
      const close = previous && date - new Date(previous.time) < 10 * 60 * 1000;
      if (!group || group.user !== item.user || !close) {
        group = { user: item.user, node: el("div", "group " + (mine ? "mine" : "theirs")), stack: el("div", "stack") };
        group.node.dataset.user = item.user;
        if (!mine) {
          const avatar = el("div", "avatar", initials(item.user));
          avatar.style.background = userColour(item.user);
          avatar.setAttribute("aria-hidden", "true");
          group.node.append(avatar);
          group.stack.append(el("div", "author", item.user));
        }
        group.node.append(group.stack);
        nodes.push(group.node);
      }
      group.stack.append(bubble(item, mine, conv), ...chips(item));
      previous = item;
    }
    box.replaceChildren(...nodes);
    if (options && options.keepFromBottom) box.scrollTop = box.scrollHeight - fromBottom;
    else if (options && options.toNew && newLine) newLine.scrollIntoView({ block: "center" });
    else if (atBottom || (options && options.toNew)) box.scrollTop = box.scrollHeight;
  }

  function bubble(item, mine, conv) {
    const node = el("div", "bubble");
    node.setAttribute("role", "article");
    if (item.id) node.dataset.id = item.id;
    if (item.pending) node.classList.add("sending");
    if (item.replyTo) node.append(quote(item.replyTo, conv));
    const text = el("span", "text");
    if (item.redacted) {
      node.classList.add("redacted");
      text.textContent = mine ? "you took this message back" : "message taken back";
    } else {
      appendText(text, item.text);
      if (!mine && mentionsMe(item.text)) node.classList.add("mention");
    }
    node.append(text);
    if (item.edited && !item.redacted) node.append(el("span", "edited", "(edited)"));
    if (item.series) {
      const series = el("span", "series", "↻");
      series.title = "from a series";
      node.append(series);
    }
    node.append(timeElement(item.time));
    if (item.redacted || item.pending) return node;
    // Focusable, so that a tap or Tab shows its buttons.
    node.tabIndex = 0;
    const actions = el("span", "actions");
    actions.append(button("Reply", () => startReply(item), "small reply"));
    actions.append(button("Thread", () => showThread(item.target, item.id), "small thread"));
    actions.append(button("React", () => chooseReaction(item), "small react"));
    if (mine && Date.now() - new Date(item.time) < 24 * 3600 * 1000) {
      if (!item.action) actions.append(button("Edit", () => startEdit(item), "small edit"));
      actions.append(button("Take back", () => takeBack(item), "small take-back"));
    }
    node.append(actions);
    return node;
  }

  /** The quote at the top of a reply (chatbroker(7), REPLY): who wrote
   *  what it answers and how it began, as text; a click shows the thread
   *  of what it answers, which the broker has even when it is not loaded
   *  here. Only the id is kept, so a message taken back or not loaded is
   *  named as such. */
  function quote(id, conv) {
    const original = conv && conv.items.find((other) => other.id === id && !other.notice);
    const node = el("div", "quote");
    if (!original) {
      node.textContent = "↱ a reply to a message not loaded here";
    } else if (original.redacted) {
      node.textContent = "↱ a reply to a message taken back";
    } else {
      const who = original.user === me ? "you" : original.user;
      const flat = oneLine(original.text);
      const words = flat.length > 120 ? flat.slice(0, 120) + "…" : flat;
      node.textContent = "↱ " + who + ": " + words;
    }
    node.title = "show the thread of the message it answers";
    if (conv) node.addEventListener("click", () => showThread(conv.target, id));
    return node;
  }

  // ---------------------------------------------------------- reactions

  const quickReactions = ["👍", "❤️", "😂", "🎉", "👀"];

  /** The chips under a bubble: each reaction and how many put it, mine
   *  pressed; a click puts mine on or takes it off. */
  function chips(item) {
    if (!item.reactions || !item.reactions.length || item.redacted || item.pending) return [];
    const row = el("div", "reactions");
    for (const tally of item.reactions) {
      const mine = tally.users.includes(me);
      const chip = button(tally.reaction + " " + tally.users.length, () => sendReaction(item, tally.reaction, mine).catch(showError), "chip");
      chip.setAttribute("aria-pressed", String(mine));
      chip.title = tally.users.join(", ");
      row.append(chip);
    }
    return [row];
  }

  function sendReaction(item, reaction, removed) {
    return request((removed ? "UNREACT " : "REACT ") + item.target + " " + item.id + " " + reaction)
      .then(() => {
        react(item, me, reaction, removed);
        if (item.target === current) renderMessages();
      });
  }

  /** React on a bubble: a few reactions a click away, or another typed. */
  function chooseReaction(item) {
    let other;
    const dialog = openDialog({
      title: "React to " + (item.user === me ? "your message" : item.user),
      build(body) {
        const row = el("div", "row quick-reactions");
        for (const reaction of quickReactions) {
          row.append(button(reaction, () => sendReaction(item, reaction, false).then(() => dialog.close()).catch(showError), "chip"));
        }
        body.append(row);
        other = field(body, "Another: an emoji or a short word", el("input"));
        other.maxLength = 32;
      },
      okLabel: "React",
      async onOk() {
        const reaction = other.value.trim();
        // One word (chatbroker(7), REACT); the broker says what else is wrong.
        if (!reaction || /[\s,=]/.test(reaction) || reaction.startsWith(":")) {
          throw new Error("a reaction is an emoji or a short word, without spaces, commas or =");
        }
        await sendReaction(item, reaction, false);
      },
    });
  }

  // ------------------------------------------------------------ replies

  /** The message the next line answers, or the one of mine it replaces
   *  (AMEND), shown above the composer until it is sent, cancelled (Esc,
   *  ✕) or another conversation is opened. */
  let replyingTo = null;
  let editing = null;

  function startReply(item) {
    stopReply();
    replyingTo = item;
    const who = item.user === me ? "yourself" : item.user;
    $("replying-text").textContent = "Replying to " + who + ": " + oneLine(item.text);
    $("replying").hidden = false;
    $("text").focus();
  }

  function startEdit(item) {
    stopReply();
    editing = item;
    $("replying-text").textContent = "Editing: " + oneLine(item.text);
    $("replying").hidden = false;
    $("text").value = item.text;
    resizeComposer();
    $("text").focus();
  }

  function stopReply() {
    if (editing) {
      $("text").value = "";
      resizeComposer();
    }
    replyingTo = null;
    editing = null;
    $("replying").hidden = true;
  }

  /** Sends the composer's text as the new text of `item` (chatbroker(7),
   *  AMEND); its lines are joined, as a message holds one line. */
  function sendEdit(item, value) {
    const text = cleanText(value.split("\n").map((line) => line.trim()).filter(Boolean).join(" "));
    stopReply();
    if (!text.trim() || text === item.text) return;
    request("AMEND " + item.target + " " + item.id + " :" + text)
      .then(() => {
        item.text = text;
        item.edited = true;
        if (item.target === current) renderMessages();
      })
      .catch(showError);
  }

  function takeBack(item) {
    openDialog({
      title: "Take back this message?",
      build(body) {
        body.append(el("p", "sched-text", item.text));
        body.append(el("p", "hint", "It goes from everyone's screen; what people read already stays read."));
      },
      okLabel: "Take back",
      async onOk() {
        await request("REDACT " + item.target + " " + item.id);
        item.redacted = true;
        item.text = "";
        renderMessages();
      },
    });
  }

  // ------------------------------------------------------------ threads

  /** How many replies a thread view asks for (chatbroker(7), THREAD). */
  const threadReplies = 50;

  /** The thread view open, if any: its conversation and message, the
   *  messages shown (the original first, then its replies) and what came
   *  live while THREAD was answered. */
  let threadOpen = null;

  /** A message and the replies to it (chatbroker(7), THREAD) in a dialog:
   *  the original, then its first replies oldest first, each as a bubble
   *  of text; replies that come while it is open are added. THREAD's HIST
   *  lines come to its own request (see `pending`), never into the
   *  conversation's list. */
  async function showThread(target, id) {
    const view = { target, id, items: [], ids: new Set(), loading: true, more: false, buffer: [], list: null, note: null };
    view.dialog = openDialog({
      title: "Thread in " + target,
      build(body) {
        view.list = el("ol", "thread-list");
        view.list.setAttribute("aria-label", "The message and its replies");
        view.note = el("p", "hint thread-note", "loading…");
        body.append(view.list, view.note);
      },
    });
    view.dialog.classList.add("thread");
    view.dialog.addEventListener("close", () => {
      if (threadOpen === view) threadOpen = null;
    });
    threadOpen = view;
    let answer;
    try {
      answer = await request("THREAD " + target + " " + id + " " + threadReplies);
    } catch (error) {
      view.loading = false;
      view.note.className = "error thread-note";
      view.note.textContent = error.code === "NOSUCHMSG" ? "That message is no longer kept, or you may not read it." : error.message;
      return;
    }
    view.loading = false;
    for (const line of answer.lines) {
      if (line.words[0] !== "HIST") continue;
      const message = parseMessage(line.words, line.text);
      if (view.ids.has(message.id)) continue;
      view.ids.add(message.id);
      view.items.push(message);
    }
    view.more = answer.words[5] === "MORE";
    // Replies that came while THREAD was answered; those it listed once.
    if (!view.more) for (const message of view.buffer) addToThread(view, message);
    view.buffer = [];
    renderThread(view);
    const original = view.items[0];
    if (original && original.id === id && !original.redacted && !original.action) {
      const reply = button("Reply", () => {
        view.dialog.close();
        startReply(original);
      }, "small reply");
      view.dialog.querySelector(".dialog-buttons").prepend(reply);
    }
  }

  function addToThread(view, message) {
    if (view.ids.has(message.id)) return false;
    view.ids.add(message.id);
    view.items.push(message);
    return true;
  }

  /** A line that came live: a reply to the message of the open view is
   *  added to it, unless only the first replies are shown (MORE). */
  function threadMessage(message) {
    const view = threadOpen;
    if (!view || message.target !== view.target || message.replyTo !== view.id) return;
    if (view.loading) view.buffer.push(message);
    else if (!view.more && addToThread(view, message)) renderThread(view);
  }

  /** A change to a line (AMEND, REDACT) shown in the open view. */
  function threadChanged(target, id, change) {
    const view = threadOpen;
    const item = view && view.target === target && view.items.find((each) => each.id === id);
    if (!item) return;
    change(item);
    renderThread(view);
  }

  function renderThread(view) {
    const [original, ...replies] = view.items;
    view.list.replaceChildren(...view.items.map((item) => threadItem(item, item === original)));
    view.note.className = "hint thread-note";
    if (!original) view.note.textContent = "";
    else if (!replies.length) view.note.textContent = "no replies yet";
    else view.note.textContent = replies.length + (replies.length === 1 ? " reply" : " replies");
    if (view.more) view.note.textContent += "; more replies: only the first " + threadReplies + " are shown";
  }

  /** One message of a thread as a bubble of text under its author. */
  function threadItem(item, original) {
    const mine = item.user === me;
    const row = el("li", "thread-item " + (mine ? "mine" : "theirs") + (original ? " original" : ""));
    row.dataset.id = item.id;
    row.append(el("div", "author", mine ? "you" : item.user));
    const node = el("div", "bubble");
    const text = el("span", "text");
    if (item.redacted) {
      node.classList.add("redacted");
      text.textContent = mine ? "you took this message back" : "message taken back";
    } else {
      appendText(text, item.action ? "* " + item.user + " " + item.text : item.text);
    }
    node.append(text);
    if (item.edited && !item.redacted) node.append(el("span", "edited", "(edited)"));
    node.append(timeElement(item.time, longFormat));
    row.append(node);
    return row;
  }

  // ----------------------------------------------------------- sending

  let sentCount = 0;

  function setComposerEnabled(enabled) {
    for (const id of ["text", "send", "later"]) $(id).disabled = !enabled;
  }

  /** The composer's text (Shift-Enter starts a line) is one message: a
   *  single line as SAY (or REPLY), several as one BLOCK (chatbroker(7)),
   *  refused here when over 100 lines or a request line's bytes; "/me"
   *  sends each line as an action, and a few commands as chatsh. */
  async function send() {
    const field = $("text");
    const value = field.value;
    if (editing) return sendEdit(editing, value);
    if (!value.trim()) return;
    if (value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/me ")) {
      if (await command(value.trim())) {
        field.value = "";
        resizeComposer();
      }
      return;
    }
    if (!current) {
      setStatus("open a conversation first", true);
      return;
    }
    const target = current;
    const lines = value.replace(/\r\n?/g, "\n").split("\n");
    while (lines.length && !lines[0].trim()) lines.shift();
    while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
    const block = lines.length > 1 && !value.startsWith("/me ");
    let answering = replyingTo && replyingTo.target === target ? replyingTo.id : null;
    if (block) {
      const text = lines.map((line) => cleanText(line.startsWith("//") ? line.slice(1) : line)).join("\n");
      const head = "BLOCK " + target + " :";
      const bytes = new TextEncoder().encode(head + escapeBlock(text)).length;
      let problem = null;
      if (answering) problem = "a reply has one line: take out the line breaks, or Esc and send it alone";
      else if (lines.length > blockLines) problem = "a message has at most " + blockLines + " lines (this one " + lines.length + "): send the rest as another";
      else if (bytes > lineBytes) problem = "this message is " + bytes + " bytes long, over the " + lineBytes + " a message holds: send a part at a time";
      if (problem) {
        setStatus(problem, true);
        return;
      }
      field.value = "";
      resizeComposer();
      stopReply();
      return sendOne(target, text, false, null, head + escapeBlock(text));
    }
    field.value = "";
    resizeComposer();
    // The first line answers the message chosen with Reply, if any.
    stopReply();
    for (const raw of lines) {
      if (!raw.trim()) continue;
      const action = raw.startsWith("/me ");
      const text = cleanText(action ? raw.slice(4) : raw.startsWith("//") ? raw.slice(1) : raw);
      if (!text.trim()) continue;
      const replyTo = action ? null : answering;
      if (replyTo) answering = null;
      const verb = action ? "ACTION " + target : replyTo ? "REPLY " + target + " " + replyTo : "SAY " + target;
      sendOne(target, text, action, replyTo, verb + " :" + text);
    }
  }

  /** Shows `text` as sending in `target` and sends `line`, its request;
   *  the answer gives the message its id and time, a refusal takes it off
   *  (back into an empty composer when the broker was away). */
  function sendOne(target, text, action, replyTo, line) {
    const item = {
      id: "sending-" + sentCount++, pending: true, target, user: me, text, action, replyTo,
      time: new Date().toISOString(),
    };
    const conv = conversation(target);
    conv.items.push(item);
    renderMessages();
    request(line)
      .then((answer) => {
        item.id = answer.words[2];
        item.time = answer.words[3];
        item.pending = false;
        conv.ids.add(item.id);
      })
      .catch((error) => {
        conv.items.splice(conv.items.indexOf(item), 1);
        if (error.code === "OFFLINE" && !$("text").value) $("text").value = text;
        showError(error);
      })
      .finally(() => {
        if (target === current) renderMessages();
      });
  }

  async function command(line) {
    const [name, ...rest] = line.split(" ");
    const argument = rest.join(" ").trim();
    try {
      switch (name.toLowerCase()) {
        case "/join": await openTarget(argument); return true;
        case "/topic": await request("TOPIC " + current + " :" + cleanText(argument)); return true;
        case "/away": await setAway(argument || "away"); return true;
        case "/back": await setAway(""); return true;
        case "/search": $("search-input").value = argument; search(argument, false); return true;
        default: setStatus("unknown command " + name + ": try /me, /join, /topic, /away, /back, /search", true); return false;
      }
    } catch (error) {
      showError(error);
      return false;
    }
  }

  async function openTarget(value) {
    const target = value.trim().toLowerCase().startsWith("#") ? value.trim().toLowerCase() : value.trim();
    if (!/^(#[a-z0-9._-]{1,32}|@[^\s:]+)$/.test(target)) {
      setStatus("write #room or @user", true);
      return;
    }
    if (isRoom(target)) {
      await request("JOIN " + target);
      conversation(target).mine = true;
      // A room made by this JOIN is new to the list of all rooms.
      refreshRooms();
    }
    await open(target);
  }

  function resizeComposer() {
    const field = $("text");
    field.style.height = "auto";
    field.style.height = Math.min(field.scrollHeight + 2, 160) + "px";
  }

  // ------------------------------------------------------------ dialogs

  /** A modal dialog made for one question; Esc closes it. `onOk` may throw
   *  a RequestError, which the dialog shows and stays open. */
  function openDialog({ title, build, okLabel, onOk }) {
    const dialog = el("dialog");
    const form = el("form");
    form.method = "dialog";
    // The page checks what it sends itself; a time with seconds is fine.
    form.noValidate = true;
    const heading = el("h2", null, title);
    heading.id = "dialog-" + Math.random().toString(36).slice(2);
    dialog.setAttribute("aria-labelledby", heading.id);
    const body = el("div");
    const error = el("p", "error");
    error.setAttribute("role", "alert");
    const buttons = el("div", "dialog-buttons");
    const close = button(onOk ? "Cancel" : "Close", () => dialog.close(), "");
    buttons.append(close);
    if (onOk) {
      const ok = el("button", null, okLabel || "OK");
      ok.type = "submit";
      buttons.append(ok);
    }
    form.append(heading, body, error, buttons);
    dialog.append(form);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!onOk) return dialog.close();
      error.textContent = "";
      try {
        await onOk(body);
        dialog.close();
      } catch (failure) {
        error.textContent = failure.message || String(failure);
      }
    });
    dialog.addEventListener("close", () => dialog.remove());
    document.body.append(dialog);
    build(body, dialog);
    dialog.showModal();
    const first = body.querySelector("input, textarea, select, button");
    if (first) first.focus();
    return dialog;
  }

  function field(body, label, input) {
    const id = "f-" + Math.random().toString(36).slice(2);
    const caption = el("label", null, label);
    caption.htmlFor = id;
    input.id = id;
    body.append(caption, input);
    return input;
  }

  // --------------------------------------------------------- scheduling

  const pad = (number) => String(number).padStart(2, "0");

  /** The value a datetime-local input shows for an instant, in the
   *  browser's own time zone. */
  function localInput(date) {
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + "T" + pad(date.getHours()) + ":" + pad(date.getMinutes());
  }

  const dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

  /** Send later: a date and time in the user's time zone, once or again
   *  and again (SAYAT, SAYEVERY). */
  function sendLater() {
    if (!current) return setStatus("open a conversation first", true);
    const target = current;
    let when, repeat, text;
    openDialog({
      title: "Send later to " + target,
      build(body) {
        const soon = new Date(Date.now() + 3600 * 1000);
        soon.setMinutes(0, 0, 0);
        when = field(body, "When (" + zone + ")", el("input"));
        when.type = "datetime-local";
        when.required = true;
        when.value = localInput(soon);
        repeat = field(body, "Repeat", el("select"));
        for (const [value, label] of [["", "once"], ["daily", "every day"], ["weekdays", "every weekday (Monday to Friday)"], ["weekly", "every week on this day"], ["monthly", "every month on this day"]]) {
          const option = el("option", null, label);
          option.value = value;
          repeat.append(option);
        }
        text = field(body, "Message", el("textarea"));
        text.rows = 3;
        text.required = true;
        text.value = $("text").value;
      },
      okLabel: "Schedule",
      async onOk() {
        const date = new Date(when.value);
        if (isNaN(date)) throw new Error("pick a date and a time");
        const message = cleanText(text.value.replace(/\n+/g, " ")).trim();
        if (!message) throw new Error("write the message");
        let answer;
        if (!repeat.value) {
          answer = await request("SAYAT " + target + " " + date.toISOString() + " :" + message);
        } else {
          const time = pad(date.getHours()) + ":" + pad(date.getMinutes());
          const from = when.value.slice(0, 10);
          const head = { daily: "daily", weekdays: "weekdays", weekly: dayNames[date.getDay()], monthly: "monthly:" + date.getDate() }[repeat.value];
          answer = await request("SAYEVERY " + target + " " + head + "@" + time + "/" + zone + ",from:" + from + " :" + message);
        }
        $("text").value = "";
        resizeComposer();
        setStatus("scheduled for " + longFormat.format(new Date(answer.words[3])));
        if (scheduledOpen) renderScheduled();
      },
    });
  }

  const ordinals = { "1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth", last: "last" };
  const fullDays = { mon: "Monday", tue: "Tuesday", wed: "Wednesday", thu: "Thursday", fri: "Friday", sat: "Saturday", sun: "Sunday" };
  const months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

  function daysInWords(list) {
    const names = list.split(",").map((part) => part.split("-").map((day) => fullDays[day] || day).join(" to "));
    return names.length > 1 ? names.slice(0, -1).join(", ") + " and " + names[names.length - 1] : names[0];
  }

  function amountInWords(amount) {
    const units = { d: "day", h: "hour", m: "minute", s: "second" };
    return [...amount.matchAll(/(\d+)([dhms])/g)].map(([, count, unit]) => count + " " + units[unit] + (count === "1" ? "" : "s")).join(" ");
  }

  /** A SAYEVERY rule as the broker shows it (chatbroker(7), "Series"),
   *  in words; what it does not know it shows as it is. */
  function ruleInWords(rule) {
    let words = "";
    let rest = rule;
    const paused = rest.endsWith(",paused");
    if (paused) rest = rest.slice(0, -7);
    const parts = rest.split(",");
    // The main part runs to the first "from:", "until:" or "count:";
    // times of day are separated by commas too.
    let main = parts.shift();
    while (parts.length && !/^(from|until|count):/.test(parts[0])) main += "," + parts.shift();
    let zonePart = "";
    const slash = main.indexOf("/");
    if (slash >= 0) {
      zonePart = main.slice(slash + 1);
      main = main.slice(0, slash);
    }
    const at = main.indexOf("@");
    const times = at >= 0 ? main.slice(at + 1).split(",").join(" and ") : "";
    const head = at >= 0 ? main.slice(0, at) : main;
    let match;
    if (head === "daily") words = "every day";
    else if (head === "weekdays") words = "every weekday";
    else if (head === "weekends") words = "every Saturday and Sunday";
    else if ((match = /^monthly:(\d+)$/.exec(head))) words = "on day " + match[1] + " of every month";
    else if ((match = /^monthly:(\w+)-(\w+)$/.exec(head))) words = "on the " + (ordinals[match[1]] || match[1]) + " " + (fullDays[match[2]] || match[2]) + " of every month";
    else if ((match = /^yearly:(\d\d)-(\d\d)$/.exec(head))) words = "every year on " + Number(match[2]) + " " + months[Number(match[1]) - 1];
    else if ((match = /^every:(\d+)w:(.+)$/.exec(head))) words = (match[1] === "1" ? "every week" : "every " + match[1] + " weeks") + " on " + daysInWords(match[2]);
    else if ((match = /^every:((?:\d+[dhms])+)$/.exec(head))) words = "every " + amountInWords(match[1]);
    else if (/^(mon|tue|wed|thu|fri|sat|sun)/.test(head)) words = "every " + daysInWords(head);
    else if (head.startsWith("rrule:")) words = "by the calendar rule " + head.slice(6);
    else words = head;
    if (times) words += " at " + times;
    if (zonePart) words += " (" + zonePart + ")";
    for (const part of parts) {
      const [key, value] = [part.slice(0, part.indexOf(":")), part.slice(part.indexOf(":") + 1)];
      if (key === "from") words += ", from " + value;
      else if (key === "until") words += ", until " + value;
      else if (key === "count") words += ", " + value + " times in all";
    }
    if (paused) words += ", paused";
    return words;
  }

  let scheduledOpen = null;

  function scheduleChanged() {
    if (scheduledOpen) {
      clearTimeout(scheduleChanged.timer);
      scheduleChanged.timer = setTimeout(renderScheduled, 200);
    }
  }

  /** Your pending messages and series (SCHEDULED): text, due time, rule in
   *  words, and what may be done to each. */
  function showScheduled() {
    scheduledOpen = openDialog({
      title: "Scheduled messages",
      build(body) {
        body.append(el("ul", "sched-list"));
        body.querySelector("ul").setAttribute("aria-label", "Scheduled messages");
      },
    });
    scheduledOpen.classList.add("scheduled");
    scheduledOpen.addEventListener("close", () => (scheduledOpen = null));
    renderScheduled();
  }

  async function renderScheduled() {
    const dialog = scheduledOpen;
    if (!dialog) return;
    const list = dialog.querySelector(".sched-list");
    let answer;
    try {
      answer = await request("SCHEDULED");
    } catch (error) {
      list.replaceChildren(el("li", "error", error.message));
      return;
    }
    const count = Number(answer.words[2]) || 0;
    const lines = answer.lines.filter((line) => line.words[0] === "SCHED").slice(-count || answer.lines.length);
    if (!count) {
      list.replaceChildren(el("li", "hint", "Nothing is scheduled. Use the clock beside Send."));
      return;
    }
    list.replaceChildren(...lines.map(({ words, text }) => scheduledItem({
      id: words[1], target: words[2], due: words[3], created: words[4], rule: words[5] || null, text: text || "",
    })));
  }

  function scheduledItem(entry) {
    const item = el("li");
    item.dataset.id = entry.id;
    item.append(el("div", "sched-text", entry.text));
    const meta = el("div", "sched-meta");
    meta.append("to " + entry.target + " · " + (entry.rule ? "next " : "due "), timeElement(entry.due, longFormat));
    if (entry.rule) {
      meta.append(el("br"), el("span", "rule", ruleInWords(entry.rule)));
    }
    item.append(meta);
    const row = el("div", "row");
    const act = (line) => request(line).then(renderScheduled);
    row.append(button("Edit", () => editText(entry)));
    row.append(button("Reschedule", () => reschedule(entry)));
    if (entry.rule) {
      const paused = entry.rule.endsWith(",paused");
      row.append(button(paused ? "Resume" : "Pause", () => act("RESCHEDULE " + entry.id + (paused ? " resume" : " pause")).catch(showError)));
      row.append(button("Occurrences", () => occurrences(entry, item)));
    }
    row.append(button("Cancel", () => act("CANCEL " + entry.id).catch(showError), "small danger"));
    item.append(row);
    return item;
  }

  function editText(entry) {
    let text;
    openDialog({
      title: "Edit the scheduled message",
      build(body) {
        text = field(body, "Message", el("textarea"));
        text.rows = 3;
        text.value = entry.text;
      },
      okLabel: "Save",
      async onOk() {
        await request("EDIT " + entry.id + " :" + cleanText(text.value.replace(/\n+/g, " ")).trim());
        renderScheduled();
      },
    });
  }

  function reschedule(entry) {
    let when;
    openDialog({
      title: entry.rule ? "Move the next occurrence" : "Reschedule",
      build(body) {
        when = field(body, "When (" + zone + ")", el("input"));
        when.type = "datetime-local";
        when.value = localInput(new Date(entry.due));
        if (entry.rule) body.append(el("p", "hint", "Only the next occurrence moves; the rule goes on after it."));
      },
      okLabel: "Reschedule",
      async onOk() {
        const date = new Date(when.value);
        if (isNaN(date)) throw new Error("pick a date and a time");
        await request("RESCHEDULE " + entry.id + " " + date.toISOString());
        renderScheduled();
      },
    });
  }

  /** The next occurrences of a series, each with Skip and Replace. */
  async function occurrences(entry, item) {
    let list = item.querySelector(".occurrences");
    if (list) {
      list.remove();
      return;
    }
    list = el("ul", "occurrences");
    list.setAttribute("aria-label", "Next occurrences");
    item.append(list);
    try {
      const answer = await request("SCHEDULED " + entry.id + " NEXT 5");
      list.replaceChildren(...answer.lines.filter((line) => line.words[0] === "SCHED").map(({ words, text }) => {
        const row = el("li");
        row.dataset.due = words[3];
        const label = el("span");
        label.append(timeElement(words[3], longFormat));
        if (words[1] !== entry.id) label.append(" (replaced: " + (text || "") + ")");
        row.append(label);
        row.append(button("Skip", () => request("SKIP " + entry.id + " " + words[3]).then(renderScheduled).catch(showError)));
        row.append(button("Replace", () => replaceOccurrence(entry, words[3])));
        return row;
      }));
    } catch (error) {
      list.replaceChildren(el("li", "error", error.message));
    }
  }

  function replaceOccurrence(entry, due) {
    let when, text;
    openDialog({
      title: "Replace one occurrence",
      build(body) {
        body.append(el("p", "hint", "Instead of the occurrence of " + longFormat.format(new Date(due)) + ":"));
        when = field(body, "When (" + zone + ")", el("input"));
        when.type = "datetime-local";
        when.value = localInput(new Date(due));
        text = field(body, "Message", el("textarea"));
        text.rows = 3;
        text.value = entry.text;
      },
      okLabel: "Replace",
      async onOk() {
        const date = new Date(when.value);
        if (isNaN(date)) throw new Error("pick a date and a time");
        // The occurrence's own instant when the minute did not change, so
        // that only the text is replaced.
        const instant = localInput(date) === localInput(new Date(due)) ? due : date.toISOString();
        await request("REPLACE " + entry.id + " " + due + " " + instant + " :" + cleanText(text.value.replace(/\n+/g, " ")).trim());
        renderScheduled();
      },
    });
  }

  // -------------------------------------------------- search, topic, away

  function search(words, everywhere) {
    const query = cleanText(words).trim();
    if (!query) return;
    let results, scope;
    const run = async (before) => {
      const target = scope.checked || !current ? "*" : current;
      try {
        const answer = await request("SEARCH " + target + " 20" + (before ? " BEFORE " + before : "") + " :" + query);
        if (!before) results.replaceChildren();
        const more = results.querySelector(".more");
        if (more) more.remove();
        for (const { words: found, text } of answer.lines) {
          const message = parseMessage(found, text);
          const item = el("li");
          const head = el("div", "sched-meta");
          head.append(message.target + " · " + message.user + " · ", timeElement(message.time, longFormat));
          const body = el("div", "sched-text");
          appendText(body, message.text);
          item.append(head, body);
          item.append(button("Open " + message.target, () => {
            results.closest("dialog").close();
            openTarget(message.target);
          }));
          results.append(item);
        }
        if (!results.children.length) results.append(el("li", "hint", "Nothing found."));
        if (answer.words[4] === "MORE") {
          const item = el("li", "more");
          item.append(button("Older results", () => run(answer.words[5])));
          results.append(item);
        }
      } catch (error) {
        results.replaceChildren(el("li", "error", error.message));
      }
    };
    openDialog({
      title: "Search: " + query,
      build(body) {
        const label = el("label");
        scope = el("input");
        scope.type = "checkbox";
        scope.checked = everywhere || !current;
        scope.addEventListener("change", () => run());
        label.append(scope, " in all conversations");
        results = el("ul", "result-list");
        results.setAttribute("aria-label", "Search results");
        body.append(label, results);
      },
    });
    run();
  }

  function editTopic() {
    const conv = conversations.get(current);
    if (!conv) return;
    let text;
    openDialog({
      title: "Topic of " + conv.target,
      build(body) {
        text = field(body, "What the room is about (empty clears it)", el("input"));
        text.value = conv.topic;
      },
      okLabel: "Set topic",
      async onOk() {
        await request("TOPIC " + conv.target + " :" + cleanText(text.value).trim());
      },
    });
  }

  let away = false;

  async function setAway(text) {
    const answer = await request(text ? "AWAY :" + cleanText(text) : "AWAY");
    away = answer.words[2] !== "BACK";
    $("away").setAttribute("aria-pressed", String(away));
    setStatus(away ? "you are away: " + text : "you are back");
  }

  function toggleAway() {
    if (away) return setAway("").catch(showError);
    let text;
    openDialog({
      title: "Away",
      build(body) {
        text = field(body, "What people who write to you see", el("input"));
        text.value = "away";
      },
      okLabel: "Set away",
      onOk: () => setAway(text.value.trim() || "away"),
    });
  }

  // ------------------------------------------------------------- status

  let statusTimer = null;

  function setStatus(text, lasting) {
    clearTimeout(statusTimer);
    $("status").textContent = text;
    if (text && !lasting) statusTimer = setTimeout(() => ($("status").textContent = ""), 6000);
  }

  function showError(error) {
    if (error && error.code === "OFFLINE") return;
    setStatus(error && error.message ? error.message : String(error));
  }

  // ------------------------------------------------------------- wiring

  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  $("text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === "Escape" && (replyingTo || editing)) {
      event.preventDefault();
      stopReply();
    }
  });
  $("replying-cancel").addEventListener("click", stopReply);
  $("text").addEventListener("input", resizeComposer);
  $("later").addEventListener("click", sendLater);
  $("scheduled-open").addEventListener("click", showScheduled);
  $("topic-edit").addEventListener("click", editTopic);
  $("away").addEventListener("click", toggleAway);
  $("refresh-rooms").addEventListener("click", refreshRooms);
  $("notify").addEventListener("click", () => {
    if (canNotify) Notification.requestPermission().then(renderNotify);
  });
  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    openTarget($("open-input").value).then(() => ($("open-input").value = "")).catch(showError);
  });
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    search($("search-input").value, false);
  });
  $("menu").addEventListener("click", () => {
    const open = $("sidebar").classList.toggle("open");
    $("menu").setAttribute("aria-expanded", String(open));
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && $("sidebar").classList.contains("open")) {
      $("sidebar").classList.remove("open");
      $("menu").setAttribute("aria-expanded", "false");
    }
  });
  $("messages").addEventListener("scroll", () => {
    if ($("messages").scrollTop < 40) loadOlder();
  });
  document.addEventListener("visibilitychange", () => {
    const conv = current && conversations.get(current);
    if (!document.hidden && conv) markRead(conv);
  });

  renderNotify();
  if (!token) {
    setStatus("no token: run chatsh web and open the link it prints", true);
    return;
  }
  connect();
})();
