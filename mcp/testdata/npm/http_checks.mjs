// What the official TypeScript SDK client gets from mcp.Serve's HTTP
// handler at its edges, for mcp/serve_http_node_test.go:
//
//   node http_checks.mjs <url>
//
// It connects with a foreign Origin header, with a loopback one, and
// sends a request without a session, and prints one JSON object of what
// each got: ok, or the error's HTTP status (StreamableHTTPError.code).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2]);
const out = {};

async function connect(name, origin) {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Origin: origin } } });
  const client = new Client({ name: 'http-checks', version: '1.0.0' });
  try {
    await client.connect(transport);
    const tools = await client.listTools();
    out[name] = { ok: true, tools: tools.tools.length };
  } catch (e) {
    out[name] = { ok: false, status: e.code ?? null, message: String(e.message ?? e) };
  } finally {
    await client.close().catch(() => {});
  }
}

await connect('foreignOrigin', 'http://evil.example');
await connect('loopbackOrigin', `http://localhost:${url.port}`);

// A request on a transport that never initialized: no Mcp-Session-Id.
{
  const transport = new StreamableHTTPClientTransport(url);
  let error;
  transport.onerror = (e) => { error = e; };
  await transport.start();
  try {
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    out.noSession = { ok: true };
  } catch (e) {
    out.noSession = { ok: false, status: e.code ?? null, message: String(e.message ?? e) };
  }
  if (error && out.noSession.ok) {
    out.noSession = { ok: false, status: error.code ?? null, message: String(error.message ?? error) };
  }
  await transport.close().catch(() => {});
}

console.log(JSON.stringify(out));
