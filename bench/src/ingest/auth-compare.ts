/** `--auth-compare`: what broker authentication costs the embedded ingest. */
import { join } from 'node:path';
import {
  checkMeterTopic,
  createMemoryMeterAuth,
  type MeterTopicCache,
  startEmbeddedBroker,
} from '@kilowatch/ingest';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { arg } from '../_args.ts';
import { memoryLimitArg } from '../memory.ts';
import { type CaseResult, runCase } from './case.ts';
import { log } from './cli.ts';
import { deviceKey } from './publishers.ts';

/**
 * `--auth-compare [--pairs 3]`: the embedded case with anonymous meters (open) and with every meter on its
 * own account (auth: the broker checks the password at connect and each publish's topic against the
 * device), in adjacent pairs whose order alternates (open–auth, auth–open, …) so that a machine that
 * drifts through the run weighs on both sides alike; each round a fresh broker and DuckDB file. Each
 * pair gives three costs of authentication, and the answer is their medians over the pairs (one round
 * disturbed by a burst of other work moves a median little, a mean a lot):
 * - `cost`: 1 − auth rate ÷ open rate;
 * - `cost_vs_direct`: the same of each round's rate over the store's own direct rate in that round;
 * - `cpu_cost`: the process's CPU per reading with authentication ÷ without, − 1 (CPU spent is the least
 *   sensitive to other processes taking the cores).
 */
export async function authCompare(
  dir: string,
  args: string[],
  opts: Parameters<typeof runCase>[3],
): Promise<object> {
  const pairs = Math.max(1, arg(args, 'pairs', 3));
  const order = Array.from({ length: pairs }, (_, p) => (p % 2 === 0 ? [false, true] : [true, false])).flat();
  const rounds: { auth: boolean; pair: number; result: CaseResult }[] = [];
  for (const [i, auth] of order.entries()) {
    const meters = createMemoryMeterAuth();
    const accounts = new Map<string, { username: string; password: string }>();
    const broker = await startEmbeddedBroker(
      auth ? { port: 0, auth: meters } : { port: 0, allowAnonymous: true },
    );
    const store = await createDuckDbStore({
      path: join(dir, `telemetry-${i}.duckdb`),
      memoryLimit: memoryLimitArg(args),
    });
    try {
      const name = auth ? 'auth' : 'open';
      log(`round ${i + 1}/${order.length}: ${auth ? 'meters on their own accounts' : 'anonymous meters'}`);
      const result = await runCase(
        `embedded-${name}-${i}`,
        store,
        { broker },
        {
          ...opts,
          ...(auth
            ? {
                credentialsOf: (key: string) => {
                  const a = accounts.get(key) ?? meters.issue(key);
                  accounts.set(key, a);
                  return a;
                },
              }
            : {}),
        },
      );
      rounds.push({ auth, pair: Math.floor(i / 2), result });
    } finally {
      await store.close();
      await broker.close();
    }
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const cpuPerReading = (r: CaseResult) => (r.saturation_cores * 1e6) / r.readings_per_s;
  const perPair = Array.from({ length: pairs }, (_, p) => {
    const open = rounds.find((r) => r.pair === p && !r.auth)!.result;
    const auth = rounds.find((r) => r.pair === p && r.auth)!.result;
    return {
      cost: 1 - auth.readings_per_s / open.readings_per_s,
      cost_vs_direct: 1 - auth.direct_ratio / open.direct_ratio,
      cpu_cost: cpuPerReading(auth) / cpuPerReading(open) - 1,
    };
  });
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  // The broker's per-publish work for a meter, alone, in CPU time (what other processes do to the clock
  // does not count): the first publish to a topic checks and rewrites it, later ones find it cached.
  const topicCheck = (cached: boolean) => {
    const key = deviceKey(0xbe01, 7);
    const topics = [`kilowatch/meters/${key}/readings`, `tele/tasmota_${key.slice(6).toUpperCase()}/SENSOR`];
    const n = 1_000_000;
    let cache: MeterTopicCache = new Map();
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      if (!cached) cache = new Map();
      if (checkMeterTopic(cache, key, topics[i & 1]!).refusal) throw new Error('refused');
    }
    const used = process.cpuUsage(t);
    return ((used.user + used.system) * 1000) / n;
  };
  const checkNs = {
    first: median([0, 1, 2].map(() => topicCheck(false))),
    cached: median([0, 1, 2].map(() => topicCheck(true))),
  };
  const side = (auth: boolean, f: (r: CaseResult) => number) =>
    median(rounds.filter((r) => r.auth === auth).map((r) => f(r.result)));
  return {
    pairs,
    cost: r3(median(perPair.map((p) => p.cost))),
    cost_vs_direct: r3(median(perPair.map((p) => p.cost_vs_direct))),
    cpu_cost: r3(median(perPair.map((p) => p.cpu_cost))),
    per_pair: perPair.map((p) => ({
      cost: r3(p.cost),
      cost_vs_direct: r3(p.cost_vs_direct),
      cpu_cost: r3(p.cpu_cost),
    })),
    topic_check_ns: { first: Math.round(checkNs.first), cached: Math.round(checkNs.cached) },
    topic_check_share_of_cpu_per_reading:
      Math.round((checkNs.cached / 1000 / side(false, cpuPerReading)) * 1e6) / 1e6,
    open_readings_per_s: Math.round(side(false, (r) => r.readings_per_s)),
    auth_readings_per_s: Math.round(side(true, (r) => r.readings_per_s)),
    open_cpu_us_per_reading: Math.round(side(false, cpuPerReading) * 10) / 10,
    auth_cpu_us_per_reading: Math.round(side(true, cpuPerReading) * 10) / 10,
    open_p99_ms: side(false, (r) => r.p99_ms),
    auth_p99_ms: side(true, (r) => r.p99_ms),
    rounds: rounds.map((r) => ({
      pair: r.pair,
      auth: r.auth,
      readings_per_s: r.result.readings_per_s,
      p99_ms: r.result.p99_ms,
      direct_readings_per_s: r.result.direct_readings_per_s,
      direct_ratio: r.result.direct_ratio,
      saturation_cores: r.result.saturation_cores,
      cpu_us_per_reading: Math.round(cpuPerReading(r.result) * 10) / 10,
    })),
  };
}
