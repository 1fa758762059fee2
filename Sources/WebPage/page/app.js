// A placeholder for the chat page: it connects with the token from the
// link (#k=...) and shows the broker's lines as text. See chatbroker(7),
// "The web door".
"use strict";
(function () {
  const status = document.getElementById("status");
  const match = /[#&]k=([0-9a-f]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem("token", match[1]);
    history.replaceState(null, "", location.pathname);
  }
  const token = sessionStorage.getItem("token");
  if (!token) {
    status.textContent = "no token: run chatsh web and open the link it prints";
    return;
  }
  const socket = new WebSocket("ws://" + location.host + "/ws", "chatbroker");
  socket.onopen = () => socket.send("TOKEN " + token);
  socket.onmessage = (event) => {
    const line = document.createElement("p");
    line.textContent = event.data;
    document.getElementById("chat").appendChild(line);
  };
  socket.onclose = (event) => {
    status.textContent = "closed (" + event.code + ")";
  };
})();
