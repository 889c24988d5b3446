// The benches' HTTP load generator: POSTs MCP JSON-RPC bodies to <url>/mcp over keep-alive
// connections at a fixed concurrency, until `requests` are sent or `seconds` pass, and counts
// answers that are not 200 or fail `check`. Shared by server-throughput, find-capabilities and
// user-catalog so their req/s figures are measured the same way.
import http from 'node:http';

/** A `tools/call` JSON-RPC body. */
export function toolCall(name, args, id = 1) {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

export async function httpLoad(url, bodies, headers, { requests = Infinity, seconds, concurrency, check = () => true }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL('/mcp', url);
  let sent = 0;
  let done = 0;
  let failures = 0;
  let bytes = 0;
  const deadline = Date.now() + seconds * 1000;
  const one = (body) =>
    new Promise((resolve) => {
      const req = http.request(
        target,
        {
          method: 'POST',
          agent,
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(body), ...headers },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            bytes = text.length;
            if (res.statusCode !== 200 || !check(text)) {
              if (failures === 0) console.error(`first failure: ${res.statusCode} ${text.slice(0, 200)}`);
              failures += 1;
            }
            resolve();
          });
        },
      );
      req.on('error', () => {
        failures += 1;
        resolve();
      });
      req.end(body);
    });
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < requests && Date.now() < deadline) {
        const body = bodies[sent % bodies.length];
        sent += 1;
        await one(body);
        done += 1;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return { requests: done, failures, seconds: elapsed, rps: done / elapsed, bytes };
}
