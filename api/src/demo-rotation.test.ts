/**
 * The embedded deployment as `pnpm start` runs it (`api/src/main.ts`, demo on): a demo visitor cannot
 * rotate a simulated meter's MQTT password (409: the account is the simulator's), and the simulated meter
 * keeps publishing. (Were a demo meter's account changed, its simulator asks for its credentials again at
 * every reconnect: ingest's `brokerAuth.test.ts`.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(check: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await check();
    if (v) return v;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the embedded demo: rotating a demo meter', () => {
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let base: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'kw-demo-rot-'));
    const port = await freePort();
    const mqttPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'api/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        KW_MQTT_PORT: String(mqttPort),
        KW_DATA_DIR: dataDir,
        KW_DEMO: 'on',
        KW_DEMO_HISTORY_DAYS: '1',
        KW_SIM_INTERVAL_MS: '500',
        KW_ROLLUP_INTERVAL_MS: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => {
      output += String(d);
    });
    child.stderr?.on('data', (d) => {
      output += String(d);
    });
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited: ${output}`);
        return (await fetch(`${base}/api/health/ready`).catch(() => null))?.status === 200;
      },
      120_000,
      'the server',
    );
  }, 150_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the simulated meter keeps publishing after its password is rotated', async () => {
    const login = await fetch(`${base}/api/account/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const api = (url: string, init: RequestInit = {}) =>
      fetch(`${base}${url}`, { ...init, headers: { authorization: `Bearer ${token}` } });
    const list = await api('/api/devices');
    const devices = (await list.json()) as { id: number }[];
    // The workspace is a copy of the demo template: its meters are there from the first sign-in on.
    expect(list.status, JSON.stringify(devices)).toBe(200);
    expect(devices, `${JSON.stringify(devices)}\n${output}`).not.toHaveLength(0);
    const id = devices[0]!.id;
    const connection = async () =>
      (await (await api(`/api/devices/${id}/connection`)).json()) as {
        connected: boolean;
        lastReadingAt: number | null;
        lastRejection?: { reason: string };
      };
    const first = await until(
      async () => {
        const c = await connection();
        return c.connected && c.lastReadingAt !== null && c;
      },
      60_000,
      'the simulated meter',
    );

    // A demo workspace's meter is the simulator's: a visitor cannot rotate its password away from it.
    const rotated = await api(`/api/devices/${id}/mqtt-credentials`, { method: 'POST' });
    expect(rotated.status).toBe(409);
    // And its simulated meter keeps publishing over the same connection, with no refusal on the way.
    const after = await until(
      async () => {
        const c = await connection();
        return c.connected && (c.lastReadingAt ?? 0) > first.lastReadingAt! + 1000 && c;
      },
      30_000,
      'readings after the refused rotation',
    );
    expect(after.lastRejection).toBeUndefined();
    expect(child.exitCode).toBeNull();
  }, 120_000);
});
