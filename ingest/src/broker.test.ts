import { TEST_SERVICE } from '@kilowatch/testkit';
import mqtt, { type IPublishPacket, type MqttClient } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from './broker.ts';
import { waitFor } from './test/helpers.ts';

describe('embedded broker', () => {
  it('listens on loopback and keeps a persistent session: unacknowledged and offline messages are redelivered in order', async () => {
    const broker = await startEmbeddedBroker({ port: 0, services: [TEST_SERVICE] });
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
    const publisher = await mqtt.connectAsync(broker.url, { clientId: 'kw-broker-pub', ...TEST_SERVICE });
    try {
      // A consumer that never acknowledges anything.
      const first: MqttClient = await mqtt.connectAsync(broker.url, {
        clientId: 'kw-broker-sub',
        clean: false,
        ...TEST_SERVICE,
      });
      const seen: number[] = [];
      first.handleMessage = ((packet: IPublishPacket, cb: (e?: Error) => void) => {
        seen.push(JSON.parse(String(packet.payload)).seq);
        cb(new Error('not acknowledged'));
      }) as MqttClient['handleMessage'];
      await first.subscribeAsync('kw/test/#', { qos: 1 });
      for (let seq = 0; seq < 300; seq++)
        await publisher.publishAsync('kw/test/a', JSON.stringify({ seq }), { qos: 1 });
      await waitFor(() => seen.length === 300, 10_000, 'first delivery');
      await first.endAsync(true);
      for (let seq = 300; seq < 320; seq++)
        await publisher.publishAsync('kw/test/a', JSON.stringify({ seq }), { qos: 1 });

      // The same session again, acknowledging: everything arrives, in order, once.
      // Listeners go on before the connection is up: the broker resends right after CONNACK.
      const again = mqtt.connect(broker.url, { clientId: 'kw-broker-sub', clean: false, ...TEST_SERVICE });
      const redelivered: number[] = [];
      again.on('message', (_t, payload) => redelivered.push(JSON.parse(String(payload)).seq));
      await waitFor(() => redelivered.length >= 320, 10_000, 'redelivery');
      await again.endAsync();

      // Acknowledged now: a third connection gets nothing more.
      const third = mqtt.connect(broker.url, { clientId: 'kw-broker-sub', clean: false, ...TEST_SERVICE });
      const more: number[] = [];
      third.on('message', (_t, payload) => more.push(JSON.parse(String(payload)).seq));
      await waitFor(() => third.connected, 5000, 'third connection');
      await new Promise((r) => setTimeout(r, 300));
      await third.endAsync();
      expect(redelivered).toEqual(Array.from({ length: 320 }, (_, i) => i));
      expect(more).toEqual([]);
    } finally {
      await publisher.endAsync();
      await broker.close();
    }
  });
});
