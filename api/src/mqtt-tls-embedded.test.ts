/**
 * The embedded deployment's TLS listener as `pnpm start` runs it (`api/src/main.ts`): KW_MQTT_TLS_PORT,
 * KW_MQTT_TLS_CERT and KW_MQTT_TLS_KEY pointed at a throw-away CA's certificate for 127.0.0.1 (made by
 * `openssl` at test time). A claim tells the meter `mqtts://` on that port; the meter connects with its own
 * account trusting the CA and its reading is stored for its device, through the same broker, accounts and
 * ingest as plain MQTT. Plain MQTT on the TLS port and a wrong password over TLS get no connection.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { tryConnect } from '@kilowatch/ingest/conformance';
import {
  findOpenssl,
  freePort,
  type KilowatchProcess,
  makeTestCertificates,
  sleep,
  startKilowatch,
  type TestCertificates,
} from '@kilowatch/testkit';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const openssl = findOpenssl();

/**
 * How a connection attempt ends: connected, an error, or closed by the server before any CONNACK (the TLS
 * listener closes a connection that does not start with a TLS handshake; mqtt.js's `connectAsync` waits
 * forever then).
 */
async function attempt(url: string, opts: IClientOptions): Promise<'connected' | 'closed' | Error> {
  const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
  const outcome = await new Promise<'connected' | 'closed' | Error>((resolve) => {
    client.once('connect', () => resolve('connected'));
    client.once('error', (err) => resolve(err));
    client.once('close', () => resolve('closed'));
  });
  await client.endAsync(true);
  return outcome;
}

describe.skipIf(!openssl)('the embedded broker over TLS (KW_MQTT_TLS_*)', () => {
  let dir: string;
  let certs: TestCertificates;
  let tlsPort: number;
  let server: KilowatchProcess;
  let token: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kw-mqtt-tls-embedded-'));
    certs = await makeTestCertificates(openssl as string, dir);
    tlsPort = await freePort();
    server = await startKilowatch({
      name: 'the server',
      env: {
        KW_DEMO: 'off',
        KW_ROLLUP_INTERVAL_MS: '0',
        LOG_LEVEL: 'warn',
        KW_MQTT_TLS_PORT: String(tlsPort),
        KW_MQTT_TLS_CERT: certs.certFile,
        KW_MQTT_TLS_KEY: certs.keyFile,
      },
      ready: { http: '/api/health/ready' },
    });
    const res = await fetch(`${server.url}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'tls@example.org', password: 'correct horse battery', fullName: 'TLS' }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    token = ((await res.json()) as { token: string }).token;
  }, 150_000);
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const api = async (url: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await fetch(`${server.url}${url}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked by the assertions.
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('a claim tells the meter mqtts:// on the TLS port; the meter connects trusting the CA and its reading is stored', async () => {
    const key = '8a0000000001';
    const claim = await api('/api/devices', {
      method: 'POST',
      body: { mac: key.match(/../g)!.join(':'), name: 'Meter', typeCode: 1 },
    });
    expect(claim.status, JSON.stringify(claim.body)).toBe(201);
    expect(claim.body.mqtt).toMatchObject({ host: '127.0.0.1', port: tlsPort, tls: true });
    const { username, password } = claim.body.mqtt as { username: string; password: string };

    const meter = await tryConnect(`mqtts://127.0.0.1:${tlsPort}`, {
      clientId: 'kw-tls-embedded-meter',
      ca: certs.ca,
      username,
      password,
    });
    expect(meter, server.output()).not.toBeInstanceOf(Error);
    const socket = (meter as unknown as { stream: TLSSocket }).stream;
    expect(socket.authorized).toBe(true);
    expect(['TLSv1.2', 'TLSv1.3']).toContain(socket.getProtocol());
    // A minute before the server's clock: a reading from the future is refused.
    const ts = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    await (meter as MqttClient).publishAsync(
      `kilowatch/meters/${key}/readings`,
      JSON.stringify({ ts, values: { vave1: 229.5 } }),
      { qos: 1 },
    );
    await (meter as MqttClient).endAsync();
    const id = claim.body.id as number;
    let latest = await api(`/api/devices/${id}/latest`);
    for (let i = 0; i < 200 && latest.body.ts !== ts; i++) {
      await sleep(50);
      latest = await api(`/api/devices/${id}/latest`);
    }
    expect(latest.body).toMatchObject({ ts, values: { vave1: 229.5 } });
  });

  it('plain MQTT on the TLS port, a client that does not trust the CA, and a wrong password over TLS get no connection', async () => {
    const key = '8a0000000002';
    const claim = await api('/api/devices', {
      method: 'POST',
      body: { mac: key.match(/../g)!.join(':'), name: 'Meter', typeCode: 1 },
    });
    expect(claim.status).toBe(201);
    const { username, password } = claim.body.mqtt as { username: string; password: string };
    expect(
      await attempt(`mqtt://127.0.0.1:${tlsPort}`, { clientId: 'kw-tls-e-plain', username, password }),
    ).toBe('closed');
    const untrusting = await tryConnect(`mqtts://127.0.0.1:${tlsPort}`, {
      clientId: 'kw-tls-e-untrusting',
      username,
      password,
    });
    expect((untrusting as NodeJS.ErrnoException).code).toMatch(
      /^(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/,
    );
    const wrong = await tryConnect(`mqtts://127.0.0.1:${tlsPort}`, {
      clientId: 'kw-tls-e-wrong',
      ca: certs.ca,
      username,
      password: 'not-the-password',
    });
    expect(String(wrong)).toMatch(/not authori[sz]ed|bad user ?name or password/i);
    // The same account on the plain listener: one broker behind both.
    const onPlainPort = await tryConnect(`mqtt://127.0.0.1:${server.mqttPort}`, {
      clientId: 'kw-tls-e-plain-port',
      username,
      password,
    });
    expect(onPlainPort).not.toBeInstanceOf(Error);
    await (onPlainPort as MqttClient).endAsync();
  });
});
