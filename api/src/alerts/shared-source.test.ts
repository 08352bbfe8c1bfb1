/** The shared alert subscription against a real Mosquitto: each live reading reaches exactly one of two API processes. */
import { findServerBinary, type MosquittoServer, startMosquitto } from '@kilowatch/testkit';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedAlertSource, startSharedAlertSource } from './shared-source.ts';

const binary = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);

describe.skipIf(!binary)('alerts shared subscription on Mosquitto', () => {
  let broker: MosquittoServer;
  let a: SharedAlertSource;
  let b: SharedAlertSource;

  beforeAll(async () => {
    broker = await startMosquitto(binary!);
    a = await startSharedAlertSource({ mqttUrl: broker.url });
    b = await startSharedAlertSource({ mqttUrl: broker.url });
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await broker?.stop();
  });

  it('hands each committed reading to one subscriber only', async () => {
    const seen: number[] = [];
    const byA: number[] = [];
    a.onReading((r) => {
      seen.push(r.ts);
      byA.push(r.ts);
    });
    b.onReading((r) => seen.push(r.ts));
    const pub = await mqtt.connectAsync(broker.url);
    const N = 200;
    for (let i = 1; i <= N; i++) {
      await pub.publishAsync(
        'kilowatch/live/a0b1c2d3e4f5',
        JSON.stringify({ deviceKey: 'a0b1c2d3e4f5', ts: i, values: { vave1: 230 } }),
        { qos: 1 },
      );
    }
    await pub.endAsync();
    for (let i = 0; i < 500 && seen.length < N; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    // Both processes took part.
    expect(byA.length).toBeGreaterThan(0);
    expect(byA.length).toBeLessThan(N);
  });
});
