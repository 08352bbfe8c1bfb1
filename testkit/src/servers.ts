import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The one rule for a server a test needs and the machine lacks: locally its tests are skipped; under
 * `CI=true` a missing server is a failure, because a skip would hide it. Returns null (not installed)
 * or throws under CI.
 */
export function serverMissing(what: string, install: string): null {
  if (process.env.CI === 'true') throw new Error(`${what} is not installed (${install}); CI requires it`);
  return null;
}

/** Path of a server binary (the candidates first, then PATH and the sbin/bin folders), or null. */
export function lookUpBinary(name: string, candidates: readonly string[] = []): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  try {
    const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    if (path) return path;
  } catch {}
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin'])
    if (existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/** Path of a server binary, or null when it is not installed (under CI=true that throws: `serverMissing`). */
export function findServerBinary(
  name: string,
  candidates: readonly string[] = [],
  install = `apt-get install -y ${name}`,
): string | null {
  return lookUpBinary(name, candidates) ?? serverMissing(name, install);
}
