// Conformance run of an MCP server (mcp.Serve) driven by the official
// TypeScript SDK client, for mcp/serve_node_test.go.
//
//   node conformance.mjs --stdio <command> [args...]   spawns the server
//   node conformance.mjs --url <url>                   streamable HTTP
//
// The server must offer the tools of serve_fixture_test.go. The script
// declares the elicitation capability and answers approval requests with
// "accept" or "decline" as each step says. It prints one JSON object of
// what it saw, which the Go test asserts on; it exits non-zero only when
// it cannot run at all.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === '--stdio') {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: 'inherit' });
} else if (mode === '--url') {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error('usage: conformance.mjs --stdio <command> [args...] | --url <url>');
  process.exit(2);
}

const client = new Client({ name: 'conformance', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
let elicitAnswer = 'accept';
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicitations.push({ message: req.params.message, schema: req.params.requestedSchema });
  if (elicitAnswer === 'accept') {
    return { action: 'accept', content: { approve: true } };
  }
  return { action: elicitAnswer };
});

let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged++;
});

// step runs fn and records its value, or the error it threw (with its
// JSON-RPC code, if any).
const out = {};
async function step(name, fn) {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { thrown: true, code: e?.code ?? null, message: String(e?.message ?? e) };
  }
}

// The client tells the transport the negotiated version, if it listens.
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  out.protocolVersion = v;
  setVersion?.(v);
};

const timeout = { timeout: 20000 };
await client.connect(transport);

await step('tools', async () => (await client.listTools()).tools);
await step('echo', () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, timeout));
await step('add', () => client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }, undefined, timeout));

const progress = [];
await step('slow', () => client.callTool({ name: 'slow', arguments: { steps: 3 } }, undefined,
  { ...timeout, onprogress: (p) => progress.push(p) }));
out.progress = progress;

// Cancel a call as soon as it reports that it runs, then ask the server
// how many calls saw their cancellation.
const abort = new AbortController();
await step('cancel', () => client.callTool({ name: 'slow', arguments: { steps: 1, wait: true } }, undefined,
  { ...timeout, signal: abort.signal, onprogress: () => abort.abort('the test cancels') }));
await step('cancellations', async () => {
  for (let i = 0; i < 200; i++) {
    const r = await client.callTool({ name: 'cancellations', arguments: {} }, undefined, timeout);
    if (r.structuredContent?.canceled >= 1) {
      return r.structuredContent;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { canceled: 0 };
});

await step('fail', () => client.callTool({ name: 'fail', arguments: {} }, undefined, timeout));
await step('invalid', () => client.callTool({ name: 'add', arguments: { a: 'two', b: 1 } }, undefined, timeout));
await step('unknown', () => client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, timeout));

elicitAnswer = 'accept';
await step('approved', () => client.callTool({ name: 'danger', arguments: { path: '/tmp/approved' } }, undefined, timeout));
elicitAnswer = 'decline';
await step('declined', () => client.callTool({ name: 'danger', arguments: { path: '/tmp/declined' } }, undefined, timeout));
out.elicitations = elicitations;

// A tool that adds a tool: the server says its list changed.
await step('grow', () => client.callTool({ name: 'grow', arguments: {} }, undefined, timeout));
await step('listChanged', async () => {
  for (let i = 0; i < 200 && listChanged === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const names = (await client.listTools()).tools.map((t) => t.name);
  return { notified: listChanged, listed: names.includes('grown') };
});

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
