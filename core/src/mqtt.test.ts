import { describe, expect, it } from 'vitest';
import {
  meterAcl,
  meterClientIdRefusal,
  meterPublishRefusal,
  meterSubscribeRefusal,
  meterTopics,
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
