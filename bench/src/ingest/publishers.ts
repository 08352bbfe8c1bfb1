/** The meters of the ingest bench: device keys, the reading template and the publishers' worker thread. */
import { DEMO_DEVICES } from '@kilowatch/ingest';

export const houseMeter = DEMO_DEVICES.find((d) => d.kind === 'three-phase')!;
export const deviceKey = (prefix: number, i: number) =>
  `${prefix.toString(16).padStart(4, '0')}${i.toString(16).padStart(8, '0')}`;

/**
 * Publishers in a worker thread, so they do not share the bridge's event loop (meters are elsewhere); each device
 * publishes through one connection, so its readings arrive in order as a real meter's do.
 *
 * The meters are not the system under test, yet on this machine they share its two cores: they speak MQTT 3.1.1
 * over plain sockets (CONNECT, QoS 1 PUBLISH, PUBACKs read and dropped, DISCONNECT) and build each payload from
 * a prepared template, so a reading costs the publishers a few microseconds instead of a full client's
 * bookkeeping. The broker and the bridge see ordinary MQTT traffic.
 */
export const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { url, clients, devices, template, prefix, credentials } = workerData;
const { hostname, port } = new URL(url);
const last = new Map();
let budget = 0; let stopped = false; let published = 0; let packetId = 0;
const rest = JSON.stringify(Object.fromEntries(Object.entries(template).filter(([k]) => k !== 'pave1'))).slice(1);
const topics = devices.map((key) => Buffer.from('kilowatch/meters/' + key + '/readings'));
function varint(n) { const out = []; do { let b = n % 128; n = Math.floor(n / 128); if (n > 0) b |= 128; out.push(b); } while (n > 0); return out; }
const str = (s) => { const b = Buffer.from(s); return Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]); };
function connect(clientId, login) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname);
    sock.setNoDelay(true);
    // Clean session; with a login, the user name and password flags and fields.
    const body = Buffer.concat([Buffer.from([0, 4, 77, 81, 84, 84, 4, login ? 0xc2 : 2, 0, 0]), str(clientId), ...(login ? [str(login.username), str(login.password)] : [])]);
    sock.once('error', reject);
    sock.once('connect', () => sock.write(Buffer.concat([Buffer.from([0x10, ...varint(body.length)]), body])));
    let buf = Buffer.alloc(0); let connected = false;
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      // Skip whole packets (PUBACKs); the first is the CONNACK.
      for (;;) {
        let len = 0, mul = 1, i = 1;
        for (; i < buf.length && i < 5; i++) { len += (buf[i] & 127) * mul; mul *= 128; if ((buf[i] & 128) === 0) break; }
        if (i >= buf.length || buf.length < i + 1 + len) break;
        if (!connected) {
          connected = true;
          if (buf[0] !== 0x20 || buf[i + 2] !== 0) { reject(new Error('CONNACK refused')); return; }
          resolve(sock);
        }
        buf = buf.subarray(i + 1 + len);
      }
    });
  });
}
function publish(sock, topic, payload) {
  packetId = packetId % 65535 + 1;
  const p = Buffer.from(payload);
  const len = 2 + topic.length + 2 + p.length;
  sock.write(Buffer.concat([Buffer.from([0x32, ...varint(len), topic.length >> 8, topic.length & 255]), topic, Buffer.from([packetId >> 8, packetId & 255]), p]));
}
const conns = [];
async function main() {
  for (let c = 0; c < clients; c++) conns.push(await connect('kw-bench-pub-' + prefix + '-' + c, credentials && credentials[c]));
  parentPort.postMessage({ type: 'ready' });
  let d = 0;
  let scheduled = false;
  // Runs while there is budget and sleeps until the next grant otherwise (no spinning on an empty budget).
  const pump = () => {
    scheduled = false;
    if (stopped || budget <= 0) return;
    const n = Math.min(budget, 500);
    for (const c of conns) c.cork();
    for (let k = 0; k < n; k++) {
      d = (d + 1) % devices.length;
      const key = devices[d];
      const ts = Math.max(Date.now(), (last.get(key) || 0) + 1);
      last.set(key, ts);
      const payload = '{"ts":' + ts + ',"values":{"pave1":' + (800 + (published % 400)) + ',' + rest + '}';
      publish(conns[d % conns.length], topics[d], payload);
      published++;
    }
    for (const c of conns) c.uncork();
    budget -= n;
    if (budget > 0) { scheduled = true; setImmediate(pump); }
  };
  parentPort.on('message', (m) => {
    if (m.type === 'grant') { budget += m.n; if (!scheduled) { scheduled = true; setImmediate(pump); } }
    if (m.type === 'stop') {
      stopped = true;
      Promise.all(conns.map((c) => new Promise((r) => { c.end(Buffer.from([0xe0, 0]), r); }))).then(() => parentPort.postMessage({ type: 'stopped', published }));
    }
  });
  pump();
}
main().catch((e) => { parentPort.postMessage({ type: 'error', message: String(e) }); });
`;
