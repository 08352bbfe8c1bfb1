/**
 * Store options from the environment (docs/configuration.md): `INFLUX_URL`, `INFLUX_DB`, and
 * `INFLUX_TOKEN` or `INFLUX_USER`/`INFLUX_PASSWORD`. Unset `INFLUX_URL` means the embedded DuckDB store.
 */
import { StoreError } from '@kilowatch/tsdb';
import type { InfluxStoreOptions } from './store.ts';

export function influxOptionsFromEnv(
  env: Record<string, string | undefined>,
): Pick<
  InfluxStoreOptions,
  'url' | 'database' | 'token' | 'username' | 'password' | 'retentionPolicy'
> | null {
  const url = env.INFLUX_URL?.trim();
  if (!url) return null;
  const database = env.INFLUX_DB?.trim();
  if (!database) throw new StoreError('INFLUX_URL is set but INFLUX_DB is not', false, 'configuration');
  const token = env.INFLUX_TOKEN?.trim();
  const username = env.INFLUX_USER?.trim();
  if (token && username)
    throw new StoreError('set INFLUX_TOKEN or INFLUX_USER/INFLUX_PASSWORD, not both', false, 'configuration');
  return {
    url,
    database,
    ...(token ? { token } : {}),
    ...(username ? { username, password: env.INFLUX_PASSWORD ?? '' } : {}),
    ...(env.INFLUX_RP?.trim() ? { retentionPolicy: env.INFLUX_RP.trim() } : {}),
  };
}
