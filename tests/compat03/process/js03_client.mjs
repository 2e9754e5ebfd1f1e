// Drive a running server with the A2A 0.3 JavaScript SDK (@a2a-js/sdk 0.3.x) over JSON-RPC;
// print one JSON line of results.
//
// Run by tests/compat03/process/test_js03_client.py with node and NODE_PATH at .cache/js03/node_modules.
// It imports only that SDK, so it checks the wire, not shared code:
//
//     node js03_client.mjs BASE_URL TOKEN
//
// A2AClient.fromCardUrl reads the card at /.well-known/agent-card.json and posts to its `url`.
// The extended card goes through the SDK's ClientFactory and Client.getAgentCard: once without
// credentials (refused), once with createAuthenticatingFetchWithRetry, which answers the 401
// challenge (WWW-Authenticate: Bearer) with the bearer TOKEN.

import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";

// ESM ignores NODE_PATH: resolve the SDK from the folder the test installed it in.
const require = createRequire(path.join(process.env.JS03_MODULES ?? ".", "noop.js"));
const sdk = await import(require.resolve("@a2a-js/sdk/client"));
const {
  A2AClient, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} = sdk;

const HOOK = "https://93.184.216.34/hook"; // configs only: nothing is delivered
const WAIT_MS = 30000; // what any one stream may take; a hang is a failure, not a stuck test

function message(text) {
  return { kind: "message", messageId: randomUUID(), role: "user",
           parts: [{ kind: "text", text }] };
}

function partsText(parts) {
  return (parts ?? []).filter((p) => p.kind === "text").map((p) => p.text).join("");
}

function taskSummary(task) {
  return { kind: task.kind, id: task.id, context: Boolean(task.contextId),
           state: task.status?.state,
           text: (task.artifacts ?? []).map((a) => partsText(a.parts)).join(""),
           history: (task.history ?? []).length };
}

function event(e) {
  if (e.kind === "status-update") return { kind: e.kind, state: e.status.state, final: e.final };
  if (e.kind === "artifact-update") return { kind: e.kind, text: partsText(e.artifact.parts) };
  if (e.kind === "task") return { kind: e.kind, state: e.status.state };
  return { kind: e.kind };
}

function withTimeout(promise, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// A2AClient answers with the JSON-RPC response: its result, or its error as a thrown value.
async function result(response) {
  const reply = await response;
  if ("error" in reply) throw Object.assign(new Error(reply.error.message), { rpc: reply.error });
  return reply.result;
}

function describe(err) {
  if (err.rpc) return { type: "jsonrpc", code: err.rpc.code, message: err.rpc.message };
  if (err.errorResponse?.error) {
    const e = err.errorResponse.error;
    return { type: "jsonrpc", code: e.code, message: e.message };
  }
  const http = /Status: (\d{3})/.exec(err.message ?? "");
  if (http) return { type: "http", code: Number(http[1]), message: err.message.slice(0, 500) };
  return { type: err.constructor?.name ?? "Error", message: String(err.message ?? err).slice(0, 2000) };
}

async function failure(promise) {
  try {
    await promise;
  } catch (err) {
    return describe(err);
  }
  return { type: null };
}

// A step's result, or what it threw: the run goes on, so one failure hides no other.
async function step(promise) {
  try {
    return await promise;
  } catch (err) {
    return { failed: describe(err) };
  }
}

async function send(client, text, blocking = true) {
  return result(client.sendMessage({ message: message(text), configuration: { blocking } }));
}

// A non-blocking send returns before the "slow" task says it is working: wait for that.
async function working(client, id) {
  const poll = async () => {
    while ((await result(client.getTask({ id }))).status.state !== "working") {
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await withTimeout(poll(), "working");
}

async function get(client, id) {
  const full = await result(client.getTask({ id }));
  const one = await result(client.getTask({ id, historyLength: 1 }));
  return { full: taskSummary(full), one: taskSummary(one),
           roles: (one.history ?? []).map((m) => m.role) };
}

async function cancel(client) {
  const task = await send(client, "slow", false);
  await working(client, task.id);
  const canceled = await result(client.cancelTask({ id: task.id }));
  const got = await result(client.getTask({ id: task.id }));
  const last = await result(client.getTask({ id: task.id, historyLength: 1 }));
  const messages = (t) => (t.history ?? []).map((m) => [m.role, partsText(m.parts)]);
  return { started: task.status.state, same: canceled.id === task.id,
           canceled: canceled.status.state, got: got.status.state,
           history: messages(got), last: messages(last) };
}

async function push(client, taskId) {
  const id = "cfg-JS";
  const created = await result(client.setTaskPushNotificationConfig({
    taskId, pushNotificationConfig: { id, url: HOOK, token: "t" } }));
  const got = await result(client.getTaskPushNotificationConfig({
    id: taskId, pushNotificationConfigId: id }));
  const listed = await result(client.listTaskPushNotificationConfig({ id: taskId }));
  const deleted = await result(client.deleteTaskPushNotificationConfig({
    id: taskId, pushNotificationConfigId: id }));
  const after = await result(client.listTaskPushNotificationConfig({ id: taskId }));
  const pushed = created.pushNotificationConfig;
  return { created: [pushed.id, created.taskId, pushed.url, pushed.token],
           same: JSON.stringify(got) === JSON.stringify(created),
           listed: listed.map((c) => c.pushNotificationConfig.id), deleted,
           after: after.map((c) => c.pushNotificationConfig.id) };
}

async function stream(client) {
  const events = [];
  const ids = new Set();
  let text = "";
  const read = async () => {
    for await (const e of client.sendMessageStream({ message: message("stream JS") })) {
      events.push(event(e));
      ids.add(e.kind === "task" ? e.id : e.taskId);
      if (e.kind === "artifact-update") text += partsText(e.artifact.parts);
    }
  };
  await withTimeout(read(), "stream");
  return { events, text, ids: ids.size };
}

// Subscribe to a working task, cancel it from another call, read the stream to its end.
async function resubscribe(client) {
  const task = await send(client, "slow", false);
  await working(client, task.id);
  const events = client.resubscribeTask({ id: task.id });
  const first = await withTimeout(events.next(), "first event");
  const canceled = await result(client.cancelTask({ id: task.id }));
  const after = [];
  const rest = async () => {
    for await (const e of events) after.push(event(e));
  };
  await withTimeout(rest(), "rest of the stream");
  const e = first.value;
  return { first: event(e), id: (e.kind === "task" ? e.id : e.taskId) === task.id,
           canceled: canceled.status.state, after };
}

async function extendedCard(baseUrl, token) {
  const factory = (fetchImpl) => new ClientFactory(ClientFactoryOptions.createFrom(
    ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
  // The SDK reports a JSON-RPC error body as that error, whatever the HTTP status: keep it.
  let status = null;
  const watched = async (...args) => {
    const response = await fetch(...args);
    status = response.status;
    return response;
  };
  const anonymous = await factory(watched).createFromUrl(baseUrl);
  const challenged = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({}),
    shouldRetryWithHeaders: async (_req, res) =>
      res.status === 401 && res.headers.get("WWW-Authenticate")?.startsWith("Bearer")
        ? { Authorization: `Bearer ${token}` } : undefined,
  });
  const authenticated = await factory(challenged).createFromUrl(baseUrl);
  const refused = await failure(anonymous.getAgentCard());
  return {
    anonymous: { ...refused, status },
    token: await step((async () => {
      const card = await authenticated.getAgentCard();
      return { name: card.name, skills: card.skills.map((s) => s.id),
               protocolVersion: card.protocolVersion };
    })()),
  };
}

async function cardAt(url) {
  const response = await fetch(url);
  if (!response.ok) return { status: response.status };
  const card = await response.json();
  return { protocolVersion: card.protocolVersion, url: card.url,
           preferredTransport: card.preferredTransport,
           additional: (card.additionalInterfaces ?? []).map((i) => [i.transport, i.url]),
           streaming: card.capabilities?.streaming,
           pushNotifications: card.capabilities?.pushNotifications,
           extended: card.supportsAuthenticatedExtendedCard ?? null };
}

async function main(baseUrl, token) {
  const base = baseUrl.replace(/\/$/, "");
  const client = await A2AClient.fromCardUrl(`${base}/.well-known/agent-card.json`);
  const out = {
    card: await cardAt(`${base}/.well-known/agent-card.json`),
    legacy_card: await cardAt(`${base}/.well-known/agent.json`),
  };
  const task = await send(client, "hello JS");
  out.send = taskSummary(task);
  out.get = await step(get(client, task.id));
  out.get_missing = await failure(result(client.getTask({ id: "no-such-task" })));
  out.cancel_done = await failure(result(client.cancelTask({ id: task.id })));
  out.cancel = await step(cancel(client));
  out.push = await step(push(client, task.id));
  out.extended_card = await extendedCard(base, token);
  out.stream = await step(stream(client));
  out.resubscribe = await step(resubscribe(client));
  console.log(JSON.stringify(out));
}

await main(process.argv[2], process.argv[3]);
