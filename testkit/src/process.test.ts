import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKilowatch, startTogether } from './process.ts';

// A stand-in for the server's entry (plain node, no tsx): what it does is chosen by KW_FIXTURE.
const FIXTURE = `
import { createServer } from 'node:http';
const mode = process.env.KW_FIXTURE;
for (let i = 1; i <= 10; i++) console.log('line ' + i);
if (mode === 'exit') { console.error('cannot start'); process.exit(3); }
if (mode === 'stubborn') process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
if (mode === 'log') {
  process.stdout.write('ingest sub');
  setTimeout(() => process.stdout.write('scribed\\nready to decode\\n'), 50);
}
createServer((req, res) => res.end(JSON.stringify({
  url: req.url, role: process.env.KW_ROLE, dataDir: process.env.KW_DATA_DIR, host: process.env.HOST,
  parent: process.env.KW_PARENT_ONLY,
}))).listen(Number(process.env.PORT), process.env.HOST);
setInterval(() => {}, 1000);
`;

describe('startKilowatch', () => {
  let dir: string;
  let entry: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kw-testkit-process-'));
    entry = join(dir, 'main.mjs');
    await writeFile(entry, FIXTURE);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts on free loopback ports with a temp data dir, ready once HTTP answers, and cleans up on stop', async () => {
    const p = await startKilowatch({ entry, role: 'ingest', env: { KW_FIXTURE: 'serve' }, keepLines: 3 });
    const body = (await (await fetch(`${p.url}/api/health`)).json()) as Record<string, string>;
    expect(body).toEqual({ url: '/api/health', role: 'ingest', dataDir: p.dataDir, host: '127.0.0.1' });
    expect(p.port).not.toBe(p.mqttPort);
    expect(p.lines()).toEqual(['line 8', 'line 9', 'line 10']);
    expect(existsSync(p.dataDir)).toBe(true);
    await p.stop();
    expect(p.running()).toBe(false);
    expect(existsSync(p.dataDir)).toBe(false);
  });

  it('passes only PATH of the parent environment with parentEnv false', async () => {
    process.env.KW_PARENT_ONLY = 'yes';
    try {
      const answer = async (parentEnv: boolean) => {
        const p = await startKilowatch({ entry, parentEnv, env: { KW_FIXTURE: 'serve' } });
        const body = (await (await fetch(p.url)).json()) as Record<string, string>;
        await p.stop();
        return body.parent;
      };
      expect(await answer(true)).toBe('yes');
      expect(await answer(false)).toBeUndefined();
    } finally {
      delete process.env.KW_PARENT_ONLY;
    }
  });

  it('waits for log lines, however the output is split into chunks', async () => {
    const seen: string[] = [];
    const p = await startKilowatch({
      entry,
      env: { KW_FIXTURE: 'log' },
      ready: { log: ['ingest subscribed', 'ready to decode'] },
      onLine: (line) => seen.push(line),
    });
    await p.stop();
    expect(seen.slice(-2)).toEqual(['ingest subscribed', 'ready to decode']);
  });

  it('fails the start with the last lines when the process exits before it is ready', async () => {
    await expect(startKilowatch({ entry, name: 'the fixture', env: { KW_FIXTURE: 'exit' } })).rejects.toThrow(
      /the fixture exited \(3\) before it was ready; its last lines:\n(.|\n)*line 10\ncannot start/,
    );
  });

  it('fails the start when the ready check gives up, and stops the process', async () => {
    let pid = 0;
    await expect(
      startKilowatch({
        entry,
        env: { KW_FIXTURE: 'serve' },
        ready: (p) => {
          pid = p.pid;
          throw new Error('no such history');
        },
      }),
    ).rejects.toThrow(/did not start: no such history/);
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('starts processes together, and stops those that started when another fails', async () => {
    const two = await startTogether([
      { entry, env: { KW_FIXTURE: 'serve' } },
      { entry, env: { KW_FIXTURE: 'serve' } },
    ]);
    expect(two.map((p) => p.running())).toEqual([true, true]);
    await Promise.all(two.map((p) => p.stop()));

    const pids: number[] = [];
    await expect(
      startTogether([
        { entry, env: { KW_FIXTURE: 'serve' }, ready: (p) => pids.push(p.pid) > 0 },
        { entry, name: 'the failing one', env: { KW_FIXTURE: 'exit' } },
      ]),
    ).rejects.toThrow(/the failing one exited \(3\)/);
    expect(pids).not.toHaveLength(0);
    expect(() => process.kill(pids[0]!, 0)).toThrow();
  });

  it('stop sends SIGKILL after the grace period when SIGTERM is ignored', async () => {
    const p = await startKilowatch({ entry, env: { KW_FIXTURE: 'stubborn' }, stopTimeoutMs: 300 });
    await p.stop();
    expect(p.child.signalCode).toBe('SIGKILL');
  });

  it('kill is a kill -9 and keeps a data dir it was given', async () => {
    const dataDir = join(dir, 'data');
    await mkdir(dataDir);
    const p = await startKilowatch({ entry, dataDir, env: { KW_FIXTURE: 'serve' } });
    await p.kill();
    expect(p.child.signalCode).toBe('SIGKILL');
    expect(existsSync(dataDir)).toBe(true);
    await p.kill(); // a second kill of a process that is gone is a no-op
  });
});
