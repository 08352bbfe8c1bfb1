import { describe, expect, it } from 'vitest';
import {
  decodeHubEnvelope,
  decodeLiveReading,
  decodeLiveRejection,
  encodeHubEnvelope,
  encodeLiveReading,
  encodeLiveRejection,
  METER_PASSWORD_PATTERN,
  meterAcl,
  meterClientIdRefusal,
  meterPublishRefusal,
  meterSubscribeRefusal,
  meterTopics,
  newMeterPassword,
  stockSuffixOf,
} from './mqtt.ts';

// Suffix twins: both MACs end in 11:22:33. Alice's device holds the stock suffix, Bob's does not.
const ALICE = { deviceKey: 'aabbcc112233', stockTopics: true };
const BOB = { deviceKey: '111111112233', stockTopics: false };

describe('stock Tasmota names belong to the device that holds the suffix', () => {
  it('names the suffix as Tasmota does', () => {
    expect(stockSuffixOf(ALICE.deviceKey)).toBe('112233');
    expect(meterTopics(BOB.deviceKey, undefined, false).tasmota).toBe(`tele/${BOB.deviceKey}/SENSOR`);
    expect(meterTopics(ALICE.deviceKey).tasmota).toBe('tele/tasmota_112233/SENSOR');
  });

  it.each([
    ['tele/tasmota_112233/SENSOR', null, 'other-device'],
    ['tele/tasmota_112233/LWT', null, 'other-device'],
    ['stat/tasmota_112233/POWER', null, 'other-device'],
    ['cmnd/tasmota_112233/POWER', 'not-allowed', 'other-device'],
    [`tele/${BOB.deviceKey}/SENSOR`, 'other-device', null],
    [`shellypro3em-${ALICE.deviceKey}/events/rpc`, null, 'other-device'],
    [`shellypro3em-${BOB.deviceKey}/events/rpc`, 'other-device', null],
  ])('publish on %s: Alice %s, Bob %s', (topic, alice, bob) => {
    expect(meterPublishRefusal(ALICE, topic)).toBe(alice);
    expect(meterPublishRefusal(BOB, topic)).toBe(bob);
  });

  it.each([
    ['cmnd/tasmota_112233/#', null, 'other-device'],
    ['tele/tasmota_112233/#', null, 'other-device'],
    [`cmnd/${BOB.deviceKey}/#`, 'other-device', null],
    [`shellypro3em-${ALICE.deviceKey}/rpc`, null, 'other-device'],
  ])('subscribe to %s: Alice %s, Bob %s', (filter, alice, bob) => {
    expect(meterSubscribeRefusal(ALICE, filter)).toBe(alice);
    expect(meterSubscribeRefusal(BOB, filter)).toBe(bob);
  });

  it.each([
    ['DVES_112233', null, 'other-device'],
    [`shellypro3em-${ALICE.deviceKey}`, null, 'other-device'],
    [`shellyemg3-${BOB.deviceKey}`, 'other-device', null],
    ['kw-anything', null, null],
  ])('client id %s: Alice %s, Bob %s', (clientId, alice, bob) => {
    expect(meterClientIdRefusal(ALICE, clientId)).toBe(alice);
    expect(meterClientIdRefusal(BOB, clientId)).toBe(bob);
  });

  it("gives the stock topics only to the holder's Mosquitto role", () => {
    const topics = (m: typeof ALICE) => meterAcl(m).map((a) => `${a.acltype} ${a.topic}`);
    expect(topics(ALICE)).toContain('publishClientSend tele/tasmota_112233/#');
    expect(topics(ALICE)).toContain('subscribePattern cmnd/tasmota_112233/#');
    expect(topics(BOB).filter((t) => t.includes('tasmota_'))).toEqual([]);
    expect(topics(BOB)).toContain(`subscribePattern cmnd/${BOB.deviceKey}/#`);
    // A bare key is a device that holds its suffix (the standalone ingest's simulated meters).
    expect(meterAcl(ALICE.deviceKey)).toEqual(meterAcl(ALICE));
  });
});

describe('the contracts between Kilowatch processes over the broker', () => {
  const utf8 = (s: string) => new TextEncoder().encode(s);

  it('issues meter passwords of 24 random bytes in base64url', () => {
    const passwords = Array.from({ length: 200 }, newMeterPassword);
    for (const p of passwords) {
      expect(p).toMatch(METER_PASSWORD_PATTERN);
      expect(Buffer.from(p, 'base64url')).toHaveLength(24);
      expect(Buffer.from(p, 'base64url').toString('base64url')).toBe(p);
    }
    expect(new Set(passwords).size).toBe(passwords.length);
    // Every alphabet position is reached, both ends of it included.
    const chars = new Set(passwords.join(''));
    expect(chars.size).toBe(64);
  });

  it('carries a committed reading on kilowatch/live/<key> as it was, from bytes or text', () => {
    const reading = { deviceKey: 'aabbcc112233', ts: 1_767_225_600_000, seq: 4, values: { vave1: 230.1 } };
    const payload = encodeLiveReading(reading);
    expect(decodeLiveReading(payload)).toEqual(reading);
    expect(decodeLiveReading(utf8(payload), 'kilowatch/live/aabbcc112233')).toEqual(reading);
    const unsequenced = { deviceKey: 'aabbcc112233', ts: 1, values: {} };
    expect(decodeLiveReading(encodeLiveReading(unsequenced))).toStrictEqual(unsequenced);
    // Fields the contract does not name are left behind.
    expect(decodeLiveReading(JSON.stringify({ ...unsequenced, password: 'x' }))).toStrictEqual(unsequenced);
  });

  it.each([
    ['not JSON', '{"deviceKey"'],
    ['not an object', '[1,2]'],
    ['no device key', JSON.stringify({ ts: 1, values: {} })],
    ['a device key that is no key', JSON.stringify({ deviceKey: 'AABBCC112233', ts: 1, values: {} })],
    ['a timestamp as text', JSON.stringify({ deviceKey: 'aabbcc112233', ts: '1', values: {} })],
    ['no values', JSON.stringify({ deviceKey: 'aabbcc112233', ts: 1 })],
    [
      'a value that is no number',
      JSON.stringify({ deviceKey: 'aabbcc112233', ts: 1, values: { vave1: null } }),
    ],
    ['a negative sequence', JSON.stringify({ deviceKey: 'aabbcc112233', ts: 1, seq: -1, values: {} })],
  ])('reads %s on a live topic as no reading', (_what, payload) => {
    expect(decodeLiveReading(payload)).toBeNull();
  });

  it("reads a reading of another device than the topic's as no reading", () => {
    const payload = encodeLiveReading({ deviceKey: 'aabbcc112233', ts: 1, values: {} });
    expect(decodeLiveReading(payload, 'kilowatch/live/111111112233')).toBeNull();
    expect(decodeLiveReading(payload, 'kilowatch/live/aabbcc112233/rejected')).toBeNull();
  });

  it("carries ingest's refusal of a meter's message", () => {
    const refusal = { topic: 'tele/x/SENSOR', reason: 'invalid-json', detail: 'line 1', at: 5 };
    expect(decodeLiveRejection(encodeLiveRejection(refusal))).toEqual(refusal);
    expect(decodeLiveRejection(JSON.stringify({ topic: 't', reason: 'r' }))).toEqual({
      topic: 't',
      reason: 'r',
      detail: '',
    });
    expect(decodeLiveRejection(JSON.stringify({ topic: 't' }))).toBeNull();
    expect(decodeLiveRejection('nope')).toBeNull();
  });

  it("carries the hub's three events between API processes, and nothing else", () => {
    const events = [
      { kind: 'user' as const, userId: 3, key: 'n:1', message: { type: 'notification', id: 1, deviceId: 2 } },
      { kind: 'sessions' as const, userId: 3 },
      { kind: 'alert-settings' as const, deviceKey: 'aabbcc112233' },
    ];
    for (const event of events)
      expect(decodeHubEnvelope(utf8(encodeHubEnvelope({ origin: 'p1', event })))).toEqual({
        origin: 'p1',
        event,
      });
    const bad = [
      { origin: 'p1', event: { kind: 'logout', userId: 3 } },
      { origin: 'p1', event: { kind: 'sessions', userId: 1.5 } },
      { origin: 'p1', event: { kind: 'user', userId: 3, key: 'k', message: { id: 1 } } },
      { origin: 'p1', event: { kind: 'alert-settings' } },
      { origin: '', event: { kind: 'sessions', userId: 3 } },
      { event: { kind: 'sessions', userId: 3 } },
    ];
    for (const e of bad) expect(decodeHubEnvelope(JSON.stringify(e))).toBeNull();
    expect(decodeHubEnvelope('{')).toBeNull();
  });
});
