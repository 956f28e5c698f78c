// The Chat page: send a message, read the turn's server-sent events from the POST's
// streamed answer (fetch), show text, tool calls and approval questions as they come.
"use strict";
(function () {
  const chat = document.getElementById("chat");
  if (!chat) return;
  const form = document.getElementById("composer");
  const box = document.getElementById("message");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const list = document.getElementById("transcript");
  const status = document.getElementById("status");
  const approval = document.getElementById("approval");
  const attach = document.getElementById("attach");
  const csrf = form.querySelector('input[name="csrf_token"]').value;
  const base = "/p/" + encodeURIComponent(chat.dataset.profile) + "/chat";
  let answer = null;   // the assistant's <li> of the running turn
  let tools = {};      // its tool calls' <details>, by call id (or "#index" while written)

  function post(path, body) {
    return fetch(base + path, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
      body: JSON.stringify(body)});
  }

  function item(cls, text) {
    const li = document.createElement("li");
    li.className = "msg " + cls;
    if (text !== undefined) {
      const div = document.createElement("div");
      div.className = "text";
      div.textContent = text;
      li.appendChild(div);
    }
    list.appendChild(li);
    li.scrollIntoView({block: "end"});
    return li;
  }

  function appendText(text) {
    let last = answer.lastElementChild;
    if (!last || last.className !== "text") {
      last = document.createElement("div");
      last.className = "text";
      answer.appendChild(last);
    }
    last.textContent += text;
    if (!chat.dataset.firstTextAt) {  // when the page first showed the answer (bench)
      chat.dataset.firstTextAt = String(Date.now());
    }
  }

  function toolBlock(key, name) {
    let block = tools[key];
    if (!block) {
      block = document.createElement("details");
      block.className = "tool";
      block.innerHTML = '<summary><span class="tool-name"></span> <span class="tool-state"></span></summary>';
      block.querySelector(".tool-name").textContent = name;
      answer.appendChild(block);
      tools[key] = block;
    }
    return block;
  }

  function setState(block, state) {
    block.querySelector(".tool-state").textContent = state;
  }

  function addPre(block, cls, text) {
    const pre = document.createElement("pre");
    pre.className = cls;
    pre.textContent = text;
    block.appendChild(pre);
  }

  const handlers = {
    session(e) {
      if (e.unsaved) {  // a command's reply: the session's id kept for its first turn
        chat.dataset.session = e.id;
      } else if (chat.dataset.session !== e.id || chat.dataset.saved !== "yes") {
        chat.dataset.session = e.id;
        chat.dataset.saved = "yes";
        const line = document.getElementById("session-line");
        line.textContent = "Session ";
        line.appendChild(document.createElement("code")).textContent = e.id;
        history.replaceState(null, "", base + "/" + encodeURIComponent(e.id));
      }
    },
    text(e) {
      if (!chat.dataset.firstTextServerAt) chat.dataset.firstTextServerAt = String(e.at * 1000);
      appendText(e.text);
    },
    tool_writing(e) { setState(toolBlock("#" + e.index, e.name), "being written…"); },
    tool_start(e) {
      const block = toolBlock(e.id, e.name);
      addPre(block, "tool-args", e.arguments);
      setState(block, "running…");
      for (const key of Object.keys(tools)) {  // the written-call placeholders are done
        if (key.startsWith("#")) { tools[key].remove(); delete tools[key]; }
      }
    },
    tool_end(e) {
      const block = toolBlock(e.id, e.name);
      addPre(block, "tool-result", e.result);
      setState(block, e.error ? "failed" : "done");
      if (e.error) block.classList.add("error");
    },
    approval(e) {
      approval.querySelector(".who").textContent =
        (e.requester || "The agent") + " wants to run a command that needs your approval:";
      approval.querySelector(".command").textContent = e.command;
      approval.querySelector(".why").textContent = "Why it is flagged: " + e.reason +
        ". Approving for the session or always allows: " + e.scope + ".";
      approval.hidden = false;
      approval.querySelector("button").focus();
    },
    notice(e) { approval.hidden = true; item("notice", e.text); },
    new() { window.location.assign(base); },
    refused(e) { item("refused", e.message); },
    done(e) {
      approval.hidden = true;
      if (e.exit_reason === "interrupted") item("notice", "Stopped.");
      else if (e.exit_reason === "error") item("refused", "The model call failed: " + e.error);
      else if (e.exit_reason === "budget_exhausted") item("notice", "The turn used up its tool-call budget.");
    },
  };

  function dispatch(block) {
    const data = block.split("\n").filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6)).join("\n");
    if (!data) return;
    const event = JSON.parse(data);
    const handle = handlers[event.type];
    if (handle) handle(event);
  }

  async function refusal(response) {
    const html = await response.text();
    const doc = new DOMParser().parseFromString(html, "text/html");
    const detail = doc.querySelector("main p");
    return detail ? detail.textContent : "the dashboard answered " + response.status;
  }

  function dataUrl(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  async function run(text, files) {
    const user = item("user", text);
    if (files.length) {
      const names = document.createElement("div");
      names.className = "attached";
      names.textContent = "Attached: " + files.map((f) => f.name).join(", ");
      user.appendChild(names);
    }
    answer = item("assistant");
    tools = {};
    send.disabled = true;
    stop.disabled = false;
    status.textContent = "Working…";
    chat.dataset.state = "running";
    try {
      const attached = await Promise.all(files.map(
        async (f) => ({name: f.name, data: await dataUrl(f)})));
      const response = await post("/turn", {text: text, files: attached,
                                            session_id: chat.dataset.session || null});
      if (!response.ok) {  // nothing was sent on: the message back in the box to mend
        item("refused", await refusal(response));
        if (!box.value) box.value = text;
        return;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          dispatch(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch (err) {
      item("refused", "The connection to the dashboard was lost: " + err);
    } finally {
      if (answer && !answer.firstChild) answer.remove();
      answer = null;
      send.disabled = false;
      stop.disabled = true;
      status.textContent = "";
      chat.dataset.state = "idle";
      box.focus();
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = box.value.trim();
    if (!text || send.disabled) return;
    const files = Array.from(attach.files);
    box.value = "";
    attach.value = "";
    run(text, files);
  });
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  stop.addEventListener("click", async () => {
    if (!chat.dataset.session) return;
    status.textContent = "Stopping…";
    await post("/" + encodeURIComponent(chat.dataset.session) + "/stop", {});
  });
  approval.addEventListener("click", async (event) => {
    const choice = event.target.dataset && event.target.dataset.choice;
    if (!choice || !chat.dataset.session) return;
    approval.hidden = true;
    const response = await post("/" + encodeURIComponent(chat.dataset.session) + "/approval",
                                {choice: choice});
    const body = await response.json();
    status.textContent = body.message;
  });
  chat.dataset.state = "idle";
})();
