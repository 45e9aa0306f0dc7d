// The official TypeScript SDK's client against a stdio server:
//   node client.mjs <2025-11-25|2026-07-28> <command> [args...]
// It answers sampling and roots requests, listens for tools/list_changed, calls the
// three tools of tests/serving/ts_client/app.py and prints one JSON report line.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [era, command, ...args] = process.argv.slice(2);
const BOUND_MS = 60_000; // a bound on a stuck server, not a speed threshold
const bound = setTimeout(() => {
  console.error(`no report within ${BOUND_MS} ms`);
  process.exit(3);
}, BOUND_MS);

const options = { capabilities: { sampling: {}, roots: { listChanged: true } } };
if (era === '2026-07-28') options.versionNegotiation = { mode: { pin: era } };
const client = new Client({ name: 'ts-sdk-client', version: '1.0.0' }, options);

const asked = [];
client.setRequestHandler('sampling/createMessage', async (request) => {
  asked.push(`sampling: ${request.params.messages.at(-1).content.text}`);
  return { model: 'ts-model', role: 'assistant', content: { type: 'text', text: 'Tea is good.' } };
});
client.setRequestHandler('roots/list', async () => {
  asked.push('roots');
  return { roots: [{ uri: 'file:///srv/ts-work', name: 'work' }] };
});
let heard;
const changed = new Promise((resolve) => { heard = resolve; });
client.setNotificationHandler('notifications/tools/list_changed', (notification) => {
  heard(notification.method);
});

await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' }));
const subscription = era === '2026-07-28' ? await client.listen({ toolsListChanged: true }) : undefined;
const texts = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text);
const report = { protocolVersion: client.getNegotiatedProtocolVersion() };
report.summarize = texts(await client.callTool({ name: 'summarize', arguments: { topic: 'tea' } }));
report.roots = texts(await client.callTool({ name: 'roots', arguments: {} }));
report.announce = texts(await client.callTool({ name: 'announce', arguments: {} }));
report.heard = await changed;
report.asked = asked;
await subscription?.close();
await client.close();
clearTimeout(bound);
console.log(JSON.stringify(report));
