// An MCP server with a task tool, on the official TypeScript SDK's
// experimental tasks (registerToolTask, InMemoryTaskStore), for
// mcp/task_node_test.go to run toolloop's client against.
//
//   node tasks_server.mjs --stdio      serves on stdin and stdout
//   node tasks_server.mjs --http       streamable HTTP on a loopback port,
//                                      whose URL it prints as its first line
//
// Tools:
//   countdown {steps, fail?, wait?}  a task (taskSupport optional): sets its
//       statusMessage to "step i" every 100 ms, then completes ("done after
//       N steps") or fails; with wait, it runs until it is canceled.
//   countdown_required               the same, with taskSupport required.
//   stats {}                         what the server saw: the tasks whose
//       cancellation the work noticed, and the tasks created.
//   echo {text}                      a plain tool.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';

const taskStore = new InMemoryTaskStore();
const stats = { created: 0, cancelSeen: 0 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function registerCountdown(server, name, taskSupport) {
  server.experimental.tasks.registerToolTask(
    name,
    {
      description: 'Counts steps as a task; with wait, runs until canceled.',
      inputSchema: { steps: z.number().int().min(1), fail: z.boolean().optional(), wait: z.boolean().optional() },
      execution: { taskSupport },
    },
    {
      async createTask({ steps, fail, wait }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60000, pollInterval: 100 });
        stats.created++;
        (async () => {
          for (let i = 1; wait || i <= steps; i++) {
            const t = await store.getTask(task.taskId);
            if (t.status === 'cancelled') {
              stats.cancelSeen++;
              return;
            }
            if (i <= steps) await store.updateTaskStatus(task.taskId, 'working', `step ${i}`);
            await sleep(100);
          }
          if (fail) {
            await store.storeTaskResult(task.taskId, 'failed', { content: [{ type: 'text', text: 'the countdown failed' }], isError: true });
          } else {
            await store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `done after ${steps} steps` }] });
          }
        })().catch((e) => console.error('countdown:', e));
        return { task };
      },
      async getTask(_args, { taskId, taskStore: store }) {
        return await store.getTask(taskId);
      },
      async getTaskResult(_args, { taskId, taskStore: store }) {
        return await store.getTaskResult(taskId);
      },
    },
  );
}

function newServer() {
  const server = new McpServer(
    { name: 'tasks-fixture', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore },
  );
  registerCountdown(server, 'countdown', 'optional');
  registerCountdown(server, 'countdown_required', 'required');
  server.registerTool('stats', { description: 'What the server saw.', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: JSON.stringify(stats) }],
  }));
  server.registerTool('echo', { description: 'Echoes its text.', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  return server;
}

const mode = process.argv[2];
if (mode === '--stdio') {
  await newServer().connect(new StdioServerTransport());
  // Exit when the client closes stdin, whatever timers the task store
  // keeps.
  process.stdin.on('end', () => process.exit(0));
} else if (mode === '--http') {
  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    try {
      let body;
      if (req.method === 'POST') {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      }
      const sid = req.headers['mcp-session-id'];
      let transport = sid ? transports.get(sid) : undefined;
      if (!transport) {
        if (sid) {
          res.writeHead(404).end();
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
        await newServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      console.error('request:', e);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  httpServer.listen(0, '127.0.0.1', () => {
    console.log(`http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else {
  console.error('usage: tasks_server.mjs --stdio | --http');
  process.exit(2);
}
