/**
 * The server's entry (`api/src/entry.ts`, compiled to `api/dist/main.js`): it answers on the port before
 * the server has loaded, and the server then takes the same port over and serves.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, sleep } from '@kilowatch/testkit';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function start(env: Record<string, string>) {
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'api/src/entry.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', KW_DEMO: 'off', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => {
    output += String(d);
  });
  child.stderr?.on('data', (d) => {
    output += String(d);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exited, output: () => output };
}

describe('the server entry', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await sleep(500);
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('hands its port to the server, which then serves on it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'kw-entry-'));
    dirs.push(dataDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const s = start({ PORT: String(port), KW_MQTT_PORT: String(await freePort()), KW_DATA_DIR: dataDir });
    children.push(s.child);
    const statuses = new Set<string>();
    for (;;) {
      if (s.child.exitCode !== null) throw new Error(`exited: ${s.output()}`);
      const res = await fetch(`${base}/api/health`).catch(() => null);
      if (res) {
        const body = (await res.json()) as { status: string };
        statuses.add(body.status);
        if (body.status === 'ok') break;
      }
      await sleep(100);
    }
    // Everything the port answered was "starting" or the API's own answer: it was never handed to
    // anything else, and the server did not fail to listen.
    expect([...statuses].every((st) => st === 'starting' || st === 'ok')).toBe(true);
    expect((await fetch(`${base}/api/health/ready`)).status).toBe(200);
    const login = await fetch(`${base}/api/account/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'Wrong-password-1' }),
    });
    expect(login.status).toBe(400);
    expect(s.output()).toContain(`Kilowatch is ready at http://127.0.0.1:${port}`);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }, 180_000);

  it('says it is ready again, last, once the demo history is written', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'kw-entry-'));
    dirs.push(dataDir);
    const port = await freePort();
    const s = start({
      PORT: String(port),
      KW_MQTT_PORT: String(await freePort()),
      KW_DATA_DIR: dataDir,
      KW_DEMO: 'on',
      KW_DEMO_HISTORY_DAYS: '1',
      LOG_LEVEL: 'info',
      // As on a terminal: log lines in order with the ready line (JSON lines are written asynchronously).
      KW_LOG_FORMAT: 'pretty',
    });
    children.push(s.child);
    const ready = `Kilowatch is ready at http://127.0.0.1:${port}`;
    const lines = () =>
      s
        .output()
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '');
    const deadline = Date.now() + 150_000;
    while (lines().filter((l) => l.startsWith(ready)).length < 2) {
      if (s.child.exitCode !== null) throw new Error(`exited: ${s.output()}`);
      if (Date.now() > deadline) throw new Error(`no second ready line: ${s.output()}`);
      await sleep(200);
    }
    const all = lines();
    const first = all.findIndex((l) => l.startsWith(ready));
    const written = all.findIndex((l) => l.includes('demo history written'));
    const again = all.lastIndexOf(`${ready}: open it and choose "Try the demo" to sign in.`);
    // The first says the history is still being written; the history's last line follows it, and the
    // ready line without the remark follows that.
    expect(all[first]).toContain('being written');
    expect(written).toBeGreaterThan(first);
    expect(again, all.join('\n')).toBeGreaterThan(written);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }, 180_000);

  it('stops with the configuration error, before anything starts, on a wrong PORT', async () => {
    const s = start({ PORT: 'eighty' });
    children.push(s.child);
    expect(await s.exited).toBe(1);
    expect(s.output()).toMatch(/PORT/);
  }, 60_000);
});
