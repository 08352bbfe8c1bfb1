/**
 * `pnpm bench dashboard [--engine duckdb|influx] [--devices 4] [--days 365] [--step-min 1|15] [--runs 50]`:
 * the answers a household's screens ask about one meter whose history ends now — the energy summary
 * (today, month, year, billing period), the latest values, 30 days of voltage quality and of daily energy,
 * and a year's tariff statistics and tariff comparison — p50/p95 through the API over HTTP on loopback from
 * a client in a worker thread. DuckDB keeps 1-minute readings; `--engine influx` a throw-away `influxd`
 * with 15-minute readings unless told otherwise.
 */
import { memoryLimitArg } from './memory.ts';
import { arg, benchApp, httpClient } from './query.ts';

const DAY_MS = 86_400_000;

export default async function dashboard(args: string[]): Promise<object> {
  const i = args.indexOf('--engine');
  const engine = i >= 0 ? args[i + 1] : 'duckdb';
  if (engine !== 'duckdb' && engine !== 'influx') throw new Error('--engine is duckdb or influx');
  const devices = arg(args, 'devices', 4);
  const days = arg(args, 'days', 365);
  const stepMin = arg(args, 'step-min', engine === 'influx' ? 15 : 1);
  const runs = arg(args, 'runs', 50);
  const now = Date.now();
  // Whole quarters of an hour, so every step size lands on the last one before now.
  const from = Math.floor(now / 900_000) * 900_000 - days * DAY_MS;
  const b = await benchApp(devices, days, from, {
    engine,
    stepMin,
    memoryLimit: engine === 'duckdb' ? memoryLimitArg(args) : undefined,
  });
  try {
    const auth = { authorization: `Bearer ${b.token}` };
    const id = b.deviceIds[0]!;
    const locations = (await b.app.inject({ url: '/api/locations', headers: auth })).json() as {
      id: number;
    }[];
    const tariff = await b.app.inject({
      method: 'POST',
      url: `/api/locations/${locations[0]!.id}/tariffs`,
      headers: auth,
      payload: { name: 'G12', group: 'G12', zone1Price: 1.1, zone2Price: 0.6, validFrom: '2020-01-01' },
    });
    const tariffId = (tariff.json() as { id: number }).id;
    const range = (d: number) =>
      `from=${new Date(now - d * DAY_MS).toISOString()}&to=${new Date(now).toISOString()}`;
    const queries: Record<string, string> = {
      energySummary: `/api/devices/${id}/energy/summary`,
      latest: `/api/devices/${id}/latest`,
      voltageQuality30d: `/api/devices/${id}/voltage-quality?${range(30)}`,
      dailyEnergy30d: `/api/devices/${id}/energy?interval=1d&${range(30)}`,
      tariffStatsYear: `/api/tariffs/${tariffId}/stats?deviceId=${id}&${range(365)}`,
      tariffCompareYear: `/api/tariffs/compare?deviceId=${id}&${range(365)}`,
    };
    const origin = await b.app.listen({ port: 0, host: '127.0.0.1' });
    const client = httpClient(b.token);
    const results: Record<string, object> = {};
    try {
      for (const [name, url] of Object.entries(queries)) {
        const r = await client.time(origin + url, runs);
        results[name] = { p50Ms: +r.p50.toFixed(2), p95Ms: +r.p95.toFixed(2) };
        process.stderr.write(`${name}: ${JSON.stringify(results[name])}\n`);
      }
    } finally {
      await client.close();
    }
    return { bench: 'dashboard', engine, devices, days, stepMin, runs, results };
  } finally {
    await b.close();
  }
}
