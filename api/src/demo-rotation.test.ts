/**
 * The embedded deployment as `pnpm start` runs it (`api/src/main.ts`, demo on): a demo visitor cannot
 * rotate a simulated meter's MQTT password (409: the account is the simulator's), and the simulated meter
 * keeps publishing. (Were a demo meter's account changed, its simulator asks for its credentials again at
 * every reconnect: ingest's `brokerAuth.test.ts`.)
 */
import { type KilowatchProcess, startKilowatch, until } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('the embedded demo: rotating a demo meter', () => {
  let server: KilowatchProcess;
  let base: string;

  beforeAll(async () => {
    server = await startKilowatch({
      name: 'the server',
      env: {
        KW_DEMO: 'on',
        KW_DEMO_HISTORY_DAYS: '1',
        KW_SIM_INTERVAL_MS: '500',
        KW_ROLLUP_INTERVAL_MS: '0',
        LOG_LEVEL: 'warn',
      },
      ready: { http: '/api/health/ready' },
    });
    base = server.url;
  }, 150_000);

  afterAll(async () => {
    await server?.stop();
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
    expect(devices, `${JSON.stringify(devices)}\n${server.output()}`).not.toHaveLength(0);
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
      200,
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
      200,
    );
    expect(after.lastRejection).toBeUndefined();
    expect(server.child.exitCode).toBeNull();
  }, 120_000);
});
