// MCP tasks of mcp.Serve driven by the official TypeScript SDK client
// (its experimental tasks API), for mcp/task_node_test.go.
//
//   node tasks_client.mjs --stdio <command> [args...]   spawns the server
//   node tasks_client.mjs --url <url>                   streamable HTTP
//
// The server must offer the tools of task_fixture_test.go. The script
// prints one JSON object of what it saw, which the Go test asserts on; it
// exits non-zero only when it cannot run at all.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === '--stdio') {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: 'inherit' });
} else if (mode === '--url') {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error('usage: tasks_client.mjs --stdio <command> [args...] | --url <url>');
  process.exit(2);
}

const out = {};
async function step(name, fn) {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { thrown: true, code: e?.code ?? null, message: String(e?.message ?? e) };
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const client = new Client({ name: 'tasks', version: '1.0.0' }, { defaultTaskPollInterval: 100 });
await client.connect(transport);
out.protocolVersion = client.getServerVersion() && transport.protocolVersion;
out.capability = client.getServerCapabilities()?.tasks ?? null;

await step('execution', async () => {
  const { tools } = await client.listTools();
  return Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
});

// A task the client makes of its own accord (the tool says optional),
// polled to its end, its result fetched.
await step('stream', async () => {
  const seen = { types: [], statuses: [], messages: [] };
  for await (const m of client.experimental.tasks.callToolStream({ name: 'job', arguments: { steps: 4 } })) {
    seen.types.push(m.type);
    if (m.type === 'taskCreated') seen.taskId = m.task.taskId;
    if (m.type === 'taskStatus') {
      seen.statuses.push(m.task.status);
      if (m.task.statusMessage) seen.messages.push(m.task.statusMessage);
    }
    if (m.type === 'result') seen.result = m.result;
    if (m.type === 'error') seen.error = String(m.error?.message ?? m.error);
  }
  return seen;
});

// A task that fails: the stream ends with an error, tasks/result has the
// tool's error result.
await step('fail', async () => {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'job', arguments: { steps: 1, fail: true } } },
    CreateTaskResultSchema,
    { task: { ttl: 60000 } },
  );
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  const task = await client.experimental.tasks.getTask(created.task.taskId);
  return { status: task.status, statusMessage: task.statusMessage, result };
});

// A task canceled while it runs.
await step('cancel', async () => {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'job', arguments: { steps: 1, wait: true } } },
    CreateTaskResultSchema,
    { task: { ttl: 60000 } },
  );
  const id = created.task.taskId;
  let task;
  for (let i = 0; i < 200; i++) {
    task = await client.experimental.tasks.getTask(id);
    if (task.statusMessage) break;
    await sleep(50);
  }
  const running = { status: task.status, statusMessage: task.statusMessage };
  const canceled = await client.experimental.tasks.cancelTask(id);
  const after = await client.experimental.tasks.getTask(id);
  const counts = await client.callTool({ name: 'canceled', arguments: {} });
  let again;
  try {
    await client.experimental.tasks.cancelTask(id);
    again = 'no error';
  } catch (e) {
    again = { code: e?.code ?? null, message: String(e?.message ?? e) };
  }
  return { id, running, canceled: canceled.status, after: after.status, counts: JSON.parse(counts.content[0].text), again };
});

await step('list', async () => {
  const { tasks } = await client.experimental.tasks.listTasks();
  return tasks.map((t) => ({ taskId: t.taskId, status: t.status }));
});

// A tool that forbids tasks refuses one.
await step('forbidden', async () => {
  await client.request(
    { method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
    CreateTaskResultSchema,
    { task: {} },
  );
  return 'no error';
});

await step('unknownTask', async () => {
  await client.experimental.tasks.getTask('no-such-task');
  return 'no error';
});

// A plain call still works.
await step('plain', async () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));

console.log(JSON.stringify(out));
await client.close();
