/**
 * Meters over TLS on a real Mosquitto (server deployment): the `listener 8883` block deploy/mosquitto.conf
 * ships commented out is read from that file, uncommented and pointed at a throw-away CA's server
 * certificate for 127.0.0.1 (made by `openssl` at test time) on a free port, beside the plain listener
 * ingest uses, with the dynamic security plugin as in mqtt-auth-mosquitto.test.ts. A meter with the
 * account its claim gave connects over `mqtts://` trusting that CA and its reading is stored for its
 * device; plain MQTT on the TLS port, a client that does not trust the CA, and a wrong password over TLS
 * are all refused.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { type IngestRuntime, startIngest } from '@kilowatch/ingest';
import { tryConnect } from '@kilowatch/ingest/conformance';
import {
  findDynsecPlugin,
  findOpenssl,
  findServerBinary,
  freePort,
  type MosquittoServer,
  makeTestCertificates,
  sleep,
  startMosquitto,
  type TestCertificates,
} from '@kilowatch/testkit';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynsecMeterAccess, startManagedBroker } from './dynsec.ts';
import { type Account, as, buildTestApp, duckDbStore, signUp, type TestApp } from './testing/helper.ts';

const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
const plugin = mosquittoBin ? findDynsecPlugin() : null;
const openssl = findOpenssl();

const SHIPPED_CONF = readFileSync(new URL('../../deploy/mosquitto.conf', import.meta.url), 'utf8');

/**
 * The commented `#listener 8883` block of deploy/mosquitto.conf (the setting lines right after it),
 * uncommented, on `port` of 127.0.0.1, with its certificate and key at `certs`' files.
 */
function shippedTlsListener(conf: string, port: number, certs: TestCertificates): string[] {
  const lines = conf.split('\n');
  const start = lines.indexOf('#listener 8883');
  if (start < 0) throw new Error('deploy/mosquitto.conf has no commented "#listener 8883" line');
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    // Settings are commented as `#name value`; prose as `# text`.
    const m = /^#([a-z_]+) (.+)$/.exec(line);
    if (!m) break;
    const [, name, value] = m as unknown as [string, string, string];
    if (name === 'listener') block.push(`listener ${port} 127.0.0.1`);
    else if (name === 'certfile') block.push(`certfile ${certs.certFile}`);
    else if (name === 'keyfile') block.push(`keyfile ${certs.keyFile}`);
    else block.push(`${name} ${value}`);
  }
  for (const needed of ['certfile', 'keyfile'])
    if (!block.some((l) => l.startsWith(`${needed} `)))
      throw new Error(`the "#listener 8883" block of deploy/mosquitto.conf has no ${needed}`);
  return block;
}

const ADMIN = { username: 'kw-admin', password: 'admin-secret' };
const SERVICE = { username: 'kilowatch-test-services', password: 'service-secret' };
const quiet = { info() {}, warn() {}, error() {} };
const macOf = (key: string) => key.match(/../g)!.join(':');
/** The clock ingest judges readings by. */
const NOW = Date.UTC(2026, 2, 29, 12, 0);

describe.skipIf(!plugin || !openssl)(
  'meters over TLS on Mosquitto (deploy/mosquitto.conf listener 8883)',
  () => {
    let dir: string;
    let certs: TestCertificates;
    let otherCa: TestCertificates;
    let tlsListener: string[];
    let tlsUrl: string;
    let broker: MosquittoServer;
    let store: TelemetryStore;
    let access: DynsecMeterAccess;
    let t: TestApp;
    let runtime: IngestRuntime;
    let owner: Account;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kw-mqtt-tls-'));
      certs = await makeTestCertificates(openssl as string, dir);
      otherCa = await makeTestCertificates(openssl as string, dir, { name: 'Another CA', prefix: 'other-' });
      const tlsPort = await freePort();
      tlsUrl = `mqtts://127.0.0.1:${tlsPort}`;
      tlsListener = shippedTlsListener(SHIPPED_CONF, tlsPort, certs);
      broker = await startMosquitto(mosquittoBin as string, {
        dynsec: { plugin: plugin as string, admin: ADMIN },
        extraConfig: tlsListener,
      });
      store = await duckDbStore();
      let app: TestApp | undefined;
      access = await startManagedBroker({
        mqttUrl: broker.url,
        admin: ADMIN,
        service: SERVICE,
        deviceKeys: () => app?.app.devices.deviceKeys(),
        retryMs: 200,
        reconcileMs: 0,
      });
      t = await buildTestApp('pglite', { store, meterAccess: access });
      app = t;
      // Ingest on the plain listener, as on the internal network beside the broker.
      runtime = await startIngest({
        store,
        mqttUrl: broker.url,
        mqttUsername: SERVICE.username,
        mqttPassword: SERVICE.password,
        clientId: 'kw-tls-ingest',
        shared: true,
        sessionExpirySeconds: 60,
        rollupIntervalMs: 0,
        now: () => NOW,
        logger: quiet,
      });
      owner = await signUp(t.app);
    }, 60_000);
    afterAll(async () => {
      await runtime?.stop();
      await access?.stop();
      await t?.close();
      await store?.close();
      await broker?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const claim = async (key: string) => {
      const res = await as(t.app, owner, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac: macOf(key), name: 'Meter', typeCode: 1 },
      });
      expect(res.statusCode).toBe(201);
      return { username: res.json().mqtt.username as string, password: res.json().mqtt.password as string };
    };

    it('the shipped block is a TLS listener binding client ids to usernames, with a certificate, a key and TLS 1.2 at least', () => {
      expect(tlsListener).toEqual([
        expect.stringMatching(/^listener \d+ 127\.0\.0\.1$/),
        'use_username_as_clientid true',
        `certfile ${certs.certFile}`,
        `keyfile ${certs.keyFile}`,
        'tls_version tlsv1.2',
      ]);
    });

    it('a meter with its own account connects over mqtts:// trusting the CA, and its reading is stored for its device', async () => {
      const key = '7a0000000001';
      const creds = await claim(key);
      const meter = await tryConnect(tlsUrl, { clientId: 'kw-tls-meter', ca: certs.ca, ...creds });
      expect(meter).not.toBeInstanceOf(Error);
      const socket = (meter as unknown as { stream: TLSSocket }).stream;
      expect(socket.encrypted).toBe(true);
      expect(socket.authorized).toBe(true);
      expect(['TLSv1.2', 'TLSv1.3']).toContain(socket.getProtocol());
      const ts = NOW - 60_000;
      await (meter as MqttClient).publishAsync(
        `kilowatch/meters/${key}/readings`,
        JSON.stringify({ ts, values: { vave1: 231.5 } }),
        { qos: 1 },
      );
      await (meter as MqttClient).endAsync();
      for (let i = 0; i < 200 && !(await store.latest(key)); i++) await sleep(50);
      expect(await store.latest(key)).toEqual({ ts, values: { vave1: 231.5 } });
    });

    it('refuses a wrong password over TLS as on the plain listener', async () => {
      const key = '7a0000000002';
      const creds = await claim(key);
      const wrong = await tryConnect(tlsUrl, {
        clientId: 'kw-tls-wrong',
        ca: certs.ca,
        username: creds.username,
        password: 'not-the-password',
      });
      expect(wrong).toBeInstanceOf(Error);
      expect(String(wrong)).toMatch(/not authori[sz]ed|bad user ?name or password/i);
    });

    it('plain MQTT on the TLS port gets no connection', async () => {
      const key = '7a0000000003';
      const creds = await claim(key);
      const plain = await tryConnect(tlsUrl.replace('mqtts:', 'mqtt:'), {
        clientId: 'kw-tls-plain',
        ...creds,
      });
      expect(plain).toBeInstanceOf(Error);
      // The broker reads the CONNECT as a broken TLS handshake and drops the connection.
      expect(`${(plain as NodeJS.ErrnoException).code} ${(plain as Error).message}`).toMatch(
        /ECONNRESET|connection closed/i,
      );
    });

    it('a client that does not trust the CA refuses the broker', async () => {
      const key = '7a0000000004';
      const creds = await claim(key);
      // The system's CAs only, and another CA only.
      for (const ca of [undefined, otherCa.ca]) {
        const untrusting = await tryConnect(tlsUrl, { clientId: 'kw-tls-untrusting', ca, ...creds });
        expect(untrusting).toBeInstanceOf(Error);
        expect((untrusting as NodeJS.ErrnoException).code).toMatch(
          /^(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/,
        );
      }
      expect(await store.latest(key)).toBeNull();
    });
  },
);
