/**
 * Test helpers shared with other packages' suites: a real Mosquitto on a free loopback port with its
 * persistence in a temp dir, and the rule for a missing server binary (fail under CI, skip otherwise).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Path of a server binary, or null; under CI=true a missing one throws (a skip would hide it). */
export function findServerBinary(name: string, candidates: readonly string[] = []): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  try {
    const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    if (path) return path;
  } catch {}
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin'])
    if (existsSync(join(dir, name))) return join(dir, name);
  if (process.env.CI === 'true')
    throw new Error(`${name} is not installed (apt-get install -y ${name}); CI requires it`);
  return null;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const address = srv.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

export interface MosquittoServer {
  url: string;
  port: number;
  dir: string;
  /** Stops the broker (SIGTERM) and deletes its temp dir. */
  stop(): Promise<void>;
  /** Restarts on the same port and persistence. */
  restart(): Promise<void>;
}

/**
 * Starts `mosquitto` on a free loopback port, anonymous, with persistence in a temp dir. Inflight and
 * queue limits are raised: ingest acknowledges after commit, so mosquitto's default of 20 inflight
 * messages per client would cap a batch at 20.
 */
export async function startMosquitto(binary: string): Promise<MosquittoServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-mosquitto-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  await writeFile(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence true',
      `persistence_location ${dir}/`,
      'autosave_interval 1',
      'max_inflight_messages 1000',
      'max_queued_messages 1000000',
      'log_dest none',
      '',
    ].join('\n'),
  );
  let proc: ChildProcess;
  const start = async () => {
    proc = spawn(binary, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    const exited = once(proc, 'exit').then(() => {
      throw new Error(`mosquitto exited: ${stderr}`);
    });
    await Promise.race([waitForPort(port, 10_000), exited]);
    exited.catch(() => {});
  };
  const halt = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exit = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exit;
  };
  await start();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      await start();
    },
  };
}
