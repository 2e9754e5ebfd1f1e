// The playground (docs/playground.md): the agent's card, a conversation, its tasks, and every
// request made, through the public JSON-RPC binding only, as any client calls it. Credentials
// live in this page's memory (the form field) and nowhere else.
"use strict";

const ENDPOINT = document.body.dataset.endpoint;
const BASE = document.body.dataset.base;
const PAGE_SIZE = 10;
const page = {
  card: null,
  apiKeyHeader: "X-API-Key",
  continuing: null, // {taskId, contextId} while the agent waits for an answer
  contextId: null, // the conversation's context, kept across its tasks
  pageTokens: [""],
  pageIndex: 0,
  selected: null, // the task shown in the task view
  timelines: new Map(), // task id -> [{state, at, text}] seen by this page
  rpcId: 0,
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

const shortState = (state) => (state || "UNKNOWN").replace("TASK_STATE_", "");
const newId = () => (crypto.randomUUID ? crypto.randomUUID()
  : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(""));

function notice(text) {
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

// --- requests ------------------------------------------------------------------------------

class CallError extends Error {}

function credentialHeaders() {
  const kind = $("auth-kind").value;
  const value = $("auth-value").value.trim();
  if (kind === "none" || !value) return {};
  return kind === "bearer" ? { Authorization: `Bearer ${value}` } : { [page.apiKeyHeader]: value };
}

const quote = (text) => `'${String(text).replace(/'/g, "'\\''")}'`;

function curlOf(url, headers, body) {
  const parts = ["curl -sS -N", quote(url)];
  for (const [name, value] of Object.entries(headers)) parts.push("-H", quote(`${name}: ${value}`));
  if (body !== undefined) parts.push("-d", quote(body));
  return parts.join(" ");
}

function logExchange(method, url, headers, body, status, answer) {
  const curl = curlOf(url, headers, body);
  const copy = el("button", { type: "button", text: "Copy as curl" });
  copy.addEventListener("click", () => navigator.clipboard?.writeText(curl));
  const item = el("li", { class: "exchange" },
    el("details", {},
      el("summary", { text: `${method} ${url} → ${status}` }),
      el("h4", { text: "Request" }), el("pre", { text: body ?? "" }),
      el("h4", { text: "Response" }), el("pre", { text: answer }),
      el("pre", { class: "curl", text: curl }), copy));
  $("raw-log").prepend(item);
}

function explain(status, text) {
  let message = text;
  try {
    const parsed = JSON.parse(text);
    message = parsed?.error?.message || message;
  } catch { /* not JSON: the text itself */ }
  if (status === 401) {
    return `The agent refused the credentials (HTTP 401: ${message}). ` +
      "Enter a valid API key or bearer token under Credentials.";
  }
  if (status === 403) return `These credentials may not do that (HTTP 403: ${message}).`;
  return `HTTP ${status}: ${message}`;
}

function rpcBody(method, params) {
  return JSON.stringify({ jsonrpc: "2.0", id: ++page.rpcId, method, params });
}

async function post(method, params) {
  const body = rpcBody(method, params);
  const headers = { "Content-Type": "application/json", "A2A-Version": "1.0", ...credentialHeaders() };
  const url = new URL(ENDPOINT, location.origin).href;
  let response;
  try {
    response = await fetch(url, { method: "POST", headers, body });
  } catch (error) {
    throw new CallError(`The agent cannot be reached: ${error.message}`);
  }
  return { response, log: (status, answer) => logExchange(method, url, headers, body, status, answer) };
}

async function rpc(method, params) {
  const { response, log } = await post(method, params);
  const text = await response.text();
  log(response.status, text);
  if (!response.ok) throw new CallError(explain(response.status, text));
  const reply = JSON.parse(text);
  if (reply.error) throw new CallError(`${method}: ${reply.error.message} (${reply.error.code})`);
  notice("");
  return reply.result;
}

// A streaming call: `onEvent` gets each result as it arrives (SSE, one JSON-RPC response per
// `data:` line); comments (keep-alives) are skipped; an error event ends it with CallError.
async function rpcStream(method, params, onEvent) {
  const { response, log } = await post(method, params);
  if (!response.ok || !(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
    const text = await response.text();
    log(response.status, text);
    if (!response.ok) throw new CallError(explain(response.status, text));
    const reply = JSON.parse(text);
    if (reply.error) throw new CallError(`${method}: ${reply.error.message} (${reply.error.code})`);
    onEvent(reply.result);
    return;
  }
  notice("");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let transcript = "";
  let failure = null;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      transcript += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split("\n").filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart()).join("\n");
        if (!data) continue;
        const reply = JSON.parse(data);
        if (reply.error) failure = new CallError(`${method}: ${reply.error.message} (${reply.error.code})`);
        else onEvent(reply.result);
      }
    }
  } finally {
    log(response.status, transcript);
  }
  if (failure) throw failure;
}

// --- rendering a task's parts --------------------------------------------------------------

function renderPart(part) {
  if (part.text !== undefined) return el("span", { class: "text", text: part.text });
  if (part.data !== undefined) return el("pre", { class: "data", text: JSON.stringify(part.data, null, 2) });
  const name = part.filename || "file";
  const media = part.mediaType || "application/octet-stream";
  if (part.url) return el("a", { href: part.url, rel: "noopener", text: `${name} (${media})` });
  if (part.raw !== undefined) {
    const bytes = Math.floor((part.raw.length * 3) / 4);
    return el("a", { href: `data:${media};base64,${part.raw}`, download: name, text: `${name} (${media}, ${bytes} bytes)` });
  }
  return el("span", { text: "(empty part)" });
}

function renderParts(parts) {
  const box = el("div", { class: "parts" });
  for (const part of parts || []) box.append(renderPart(part));
  return box;
}

function textOf(message) {
  return (message?.parts || []).map((part) => part.text || "").join("");
}

function remember(taskId, state, text) {
  if (!taskId || !state) return;
  const line = page.timelines.get(taskId) || [];
  const last = line[line.length - 1];
  if (!last || last.state !== state || (text && last.text !== text)) {
    line.push({ state, at: new Date().toLocaleTimeString(), text: text || "" });
  }
  page.timelines.set(taskId, line);
}

// --- the conversation ----------------------------------------------------------------------

function newTurn(text) {
  const turn = {
    taskId: null, contextId: null, state: null, artifacts: new Map(),
    node: el("article", { class: "turn" }),
    meta: el("p", { class: "meta", text: "Sending…" }),
    reply: el("div", { class: "reply" }),
  };
  turn.node.append(el("p", { class: "user" }, el("strong", { text: "You: " }), text), turn.meta, turn.reply);
  $("conversation").append(turn.node);
  turn.node.scrollIntoView({ block: "end" });
  return turn;
}

function showTurn(turn) {
  turn.meta.replaceChildren(
    "Task ", el("code", { class: "task-id", text: turn.taskId || "—" }),
    " · ", el("span", { class: "state", text: shortState(turn.state) }));
  turn.reply.replaceChildren();
  if (turn.status) turn.reply.append(el("p", { class: "status-text", text: turn.status }));
  for (const artifact of turn.artifacts.values()) {
    turn.reply.append(el("div", { class: "artifact" },
      el("span", { class: "artifact-name", text: `${artifact.name || "artifact"}: ` }), renderParts(artifact.parts)));
  }
  if (turn.message) turn.reply.append(el("div", { class: "agent-message" }, renderParts(turn.message.parts)));
}

function mergeArtifact(turn, artifact, append) {
  const known = turn.artifacts.get(artifact.artifactId);
  if (append && known) {
    const parts = [...known.parts];
    for (const part of artifact.parts || []) {
      const last = parts[parts.length - 1];
      if (part.text !== undefined && last && last.text !== undefined) parts[parts.length - 1] = { ...last, text: last.text + part.text };
      else parts.push(part);
    }
    turn.artifacts.set(artifact.artifactId, { ...known, parts });
  } else {
    turn.artifacts.set(artifact.artifactId, artifact);
  }
}

function apply(turn, event) {
  const known = turn.taskId;
  applyEvent(turn, event);
  remember(turn.taskId, turn.state, turn.status);
  showTurn(turn);
  if (turn.taskId && !known) loadTasks(); // a new task is listed while it still runs
}

function applyEvent(turn, event) {
  if (event.task) {
    const task = event.task;
    turn.taskId = task.id;
    turn.contextId = task.contextId;
    turn.state = task.status?.state;
    turn.status = textOf(task.status?.message) || turn.status;
    for (const artifact of task.artifacts || []) turn.artifacts.set(artifact.artifactId, artifact);
  } else if (event.message) {
    turn.message = event.message;
    turn.contextId = event.message.contextId || turn.contextId;
    turn.state = turn.state || "reply";
  } else if (event.statusUpdate) {
    const update = event.statusUpdate;
    turn.taskId = update.taskId;
    turn.contextId = update.contextId;
    turn.state = update.status?.state;
    turn.status = textOf(update.status?.message) || turn.status;
  } else if (event.artifactUpdate) {
    const update = event.artifactUpdate;
    turn.taskId = update.taskId;
    mergeArtifact(turn, update.artifact, update.append);
  }
}

const WAITING = new Set(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);

async function send(text) {
  const message = { messageId: newId(), role: "ROLE_USER", parts: [{ text }] };
  if (page.continuing) {
    message.taskId = page.continuing.taskId;
    message.contextId = page.continuing.contextId;
  } else if (page.contextId) {
    message.contextId = page.contextId;
  }
  const turn = newTurn(text);
  try {
    if (page.card?.capabilities?.streaming) {
      await rpcStream("SendStreamingMessage", { message }, (event) => apply(turn, event));
    } else {
      apply(turn, await rpc("SendMessage", { message }));
    }
  } catch (error) {
    turn.meta.textContent = "Not sent";
    notice(error.message);
    return;
  }
  page.contextId = turn.contextId || page.contextId;
  page.continuing = WAITING.has(turn.state) ? { taskId: turn.taskId, contextId: turn.contextId } : null;
  $("continuing").textContent = page.continuing
    ? `Your next message answers task ${page.continuing.taskId} (${shortState(turn.state)}).` : "";
  loadTasks();
}

// --- the task list and the task view -------------------------------------------------------

async function loadTasks() {
  const params = { pageSize: PAGE_SIZE, historyLength: 0, pageToken: page.pageTokens[page.pageIndex] };
  const state = $("filter-state").value;
  const context = $("filter-context").value.trim();
  if (state) params.status = state;
  if (context) params.contextId = context;
  let result;
  try {
    result = await rpc("ListTasks", params);
  } catch (error) {
    notice(error.message);
    return;
  }
  const rows = (result.tasks || []).map((task) => {
    const open = el("button", { type: "button", class: "link", text: task.id });
    open.addEventListener("click", () => showTask(task.id));
    return el("tr", {}, el("td", {}, open), el("td", { text: task.contextId || "" }),
      el("td", { text: shortState(task.status?.state) }),
      el("td", { text: task.status?.timestamp ? new Date(task.status.timestamp).toLocaleString() : "" }));
  });
  $("tasks").tBodies[0].replaceChildren(...rows);
  page.pageTokens[page.pageIndex + 1] = result.nextPageToken || "";
  $("next-page").disabled = !result.nextPageToken;
  $("tasks-total").textContent = `${result.totalSize ?? rows.length} in all`;
}

function renderTask(task) {
  page.selected = task.id;
  remember(task.id, task.status?.state, textOf(task.status?.message));
  $("task-view").hidden = false;
  $("task-title").textContent = `Task ${task.id}`;
  $("task-summary").replaceChildren("Context ", el("code", { text: task.contextId || "" }),
    " · ", el("strong", { class: "state", text: shortState(task.status?.state) }));
  $("task-timeline").replaceChildren(...(page.timelines.get(task.id) || []).map((entry) =>
    el("li", { text: `${entry.at} ${shortState(entry.state)}${entry.text ? ` — ${entry.text}` : ""}` })));
  $("task-history").replaceChildren(...(task.history || []).map((message) =>
    el("li", {}, el("strong", { text: message.role === "ROLE_USER" ? "user: " : "agent: " }), renderParts(message.parts))));
  $("task-artifacts").replaceChildren(...(task.artifacts || []).map((artifact) =>
    el("div", { class: "artifact" }, el("span", { class: "artifact-name", text: `${artifact.name || artifact.artifactId}: ` }),
      renderParts(artifact.parts))));
}

async function showTask(taskId) {
  try {
    renderTask(await rpc("GetTask", { id: taskId, historyLength: 50 }));
  } catch (error) {
    notice(error.message);
    return;
  }
  const push = $("task-push");
  if (!page.card?.capabilities?.pushNotifications) {
    push.textContent = "This agent does not offer push notifications.";
    return;
  }
  try {
    const result = await rpc("ListTaskPushNotificationConfigs", { taskId });
    const configs = result.configs || [];
    push.replaceChildren(configs.length ? el("ul", {}, ...configs.map((config) =>
      el("li", { text: `${config.id}: ${config.url}` }))) : "No push notification configs.");
  } catch (error) {
    push.textContent = error.message;
  }
}

async function cancelSelected() {
  try {
    renderTask(await rpc("CancelTask", { id: page.selected }));
  } catch (error) {
    notice(error.message);
  }
  loadTasks();
}

// The task's events as they happen: each state change re-reads the task (its artifacts and
// history as stored), so the view shows what any other client would read.
async function subscribeSelected() {
  const taskId = page.selected;
  try {
    await rpcStream("SubscribeToTask", { id: taskId }, (event) => {
      if (event.task) renderTask(event.task);
      const status = event.statusUpdate?.status;
      if (status) {
        remember(taskId, status.state, textOf(status.message));
        showTask(taskId);
      }
    });
  } catch (error) {
    notice(error.message);
  }
  showTask(taskId);
}

// --- the card ------------------------------------------------------------------------------

function renderCard(card) {
  page.card = card;
  $("agent-name").textContent = card.name || "Agent";
  $("agent-description").textContent = card.description || "";
  document.title = `${card.name} · A2A playground`;
  const capabilities = card.capabilities || {};
  const schemes = Object.entries(card.securitySchemes || {});
  for (const [, scheme] of schemes) {
    const apiKey = scheme.apiKeySecurityScheme;
    if (apiKey?.name && (apiKey.location || "header").toLowerCase() === "header") page.apiKeyHeader = apiKey.name;
  }
  const list = (items) => el("ul", {}, ...items.map((item) => el("li", { text: item })));
  $("card").replaceChildren(
    el("p", { text: `Version ${card.version || "?"}${card.provider ? ` · ${card.provider.organization}` : ""}` }),
    el("h3", { text: "Interfaces" }),
    list((card.supportedInterfaces || []).map((i) => `${i.protocolBinding} ${i.protocolVersion} — ${i.url}`)),
    el("h3", { text: "Capabilities" }),
    list([`streaming: ${capabilities.streaming ? "yes" : "no"}`,
      `push notifications: ${capabilities.pushNotifications ? "yes" : "no"}`,
      `extended card: ${capabilities.extendedAgentCard ? "yes" : "no"}`]),
    el("h3", { text: "Skills" }),
    list((card.skills || []).map((skill) => `${skill.name}: ${skill.description || ""}`)),
    el("h3", { text: "Security schemes" }),
    schemes.length ? list(schemes.map(([name, scheme]) => `${name}: ${Object.keys(scheme).join(", ")}`))
      : el("p", { text: "None: anyone may call." }),
    el("h3", { text: "Input and output" }),
    list([`in: ${(card.defaultInputModes || []).join(", ")}`, `out: ${(card.defaultOutputModes || []).join(", ")}`]));
  $("card-json").textContent = JSON.stringify(card, null, 2);
}

async function loadCard() {
  const url = new URL(`${BASE}/.well-known/agent-card.json`, location.origin).href;
  const response = await fetch(url);
  const text = await response.text();
  logExchange("GET", url, {}, undefined, response.status, text);
  if (!response.ok) throw new CallError(explain(response.status, text));
  renderCard(JSON.parse(text));
}

// --- wiring --------------------------------------------------------------------------------

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("message").value.trim();
  if (!text) return;
  $("message").value = "";
  send(text);
});
$("message").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
$("new-task").addEventListener("click", () => {
  page.continuing = null;
  page.contextId = null;
  $("continuing").textContent = "";
  $("conversation").replaceChildren();
});
$("task-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  page.pageTokens = [""];
  page.pageIndex = 0;
  loadTasks();
});
$("next-page").addEventListener("click", () => { page.pageIndex += 1; loadTasks(); });
$("first-page").addEventListener("click", () => { page.pageIndex = 0; loadTasks(); });
$("refresh-task").addEventListener("click", () => showTask(page.selected));
$("cancel-task").addEventListener("click", cancelSelected);
$("subscribe-task").addEventListener("click", subscribeSelected);
$("credentials").addEventListener("submit", (event) => event.preventDefault());

loadCard().then(loadTasks, (error) => notice(error.message));
