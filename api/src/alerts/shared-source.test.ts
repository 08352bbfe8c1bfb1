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

  it('counts and drops what is not a committed reading, and hands on the readings around it', async () => {
    const seen: number[] = [];
    a.onReading((r) => seen.push(r.ts));
    b.onReading((r) => seen.push(r.ts));
    const droppedBefore = a.dropped() + b.dropped();
    const pub = await mqtt.connectAsync(broker.url);
    const topic = 'kilowatch/live/a0b1c2d3e4f5';
    const bad = [
      'not json',
      JSON.stringify({ ts: 1_001, values: { vave1: 230 } }),
      JSON.stringify({ deviceKey: 'a0b1c2d3e4f5', ts: '1002', values: { vave1: 230 } }),
      JSON.stringify({ deviceKey: 'a0b1c2d3e4f5', ts: 1_003, values: { vave1: 'high' } }),
      // A reading of another device on this device's topic.
      JSON.stringify({ deviceKey: 'ffffffffffff', ts: 1_004, values: { vave1: 230 } }),
    ];
    await pub.publishAsync(topic, JSON.stringify({ deviceKey: 'a0b1c2d3e4f5', ts: 1_000, values: {} }), {
      qos: 1,
    });
    for (const payload of bad) await pub.publishAsync(topic, payload, { qos: 1 });
    await pub.publishAsync(topic, JSON.stringify({ deviceKey: 'a0b1c2d3e4f5', ts: 1_005, values: {} }), {
      qos: 1,
    });
    await pub.endAsync();
    const dropped = () => a.dropped() + b.dropped() - droppedBefore;
    for (let i = 0; i < 500 && (seen.length < 2 || dropped() < bad.length); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(dropped()).toBe(bad.length);
    expect(seen.sort((x, y) => x - y)).toEqual([1_000, 1_005]);
  });
});
