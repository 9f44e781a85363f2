// A client killed in the middle of a call, for mcp/serve_gone_test.go.
//
//   node killed_client.mjs <command> [args...]
//
// It spawns the server over stdio, calls its tool spew (which reports
// progress until its call is cancelled), and at the first progress kills
// itself with SIGKILL, leaving the server with a closed stdin and stdout
// and a call in flight.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'killed', version: '1.0.0' });
await client.connect(transport);
await new Promise((resolve) => {
  client.callTool({ name: 'spew', arguments: {} }, undefined, { timeout: 60000, onprogress: resolve }).catch(() => {});
});
process.kill(process.pid, 'SIGKILL');
