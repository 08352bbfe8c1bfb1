/**
 * Mosquitto's log lines as the API reads them for meters' connections: the lines are as Mosquitto 2.0.11
 * writes them (captured from the broker the Mosquitto suites start), and as later 2.0 and 2.1 releases
 * write a refused login (they name the client; 2.0.11 writes `<unknown>`). The broker end to end is in
 * mqtt-auth-mosquitto.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { brokerLogState, deviceKeyInClientId, parseBrokerLogLine } from './broker-log.ts';

const KEY = 'aabbccddeeff';

describe('parseBrokerLogLine', () => {
  it('reads connections with their account, disconnections and refused logins', () => {
    expect(
      parseBrokerLogLine(
        `1795697570: New client connected from 127.0.0.1:33298 as meter1 (p2, c1, k60, u'${KEY}').`,
      ),
    ).toEqual({ kind: 'connected', address: '127.0.0.1:33298', clientId: 'meter1', username: KEY });
    expect(
      parseBrokerLogLine('1795697570: New client connected from 10.0.0.2:1 as CENSYS (p2, c0, k10).'),
    ).toEqual({ kind: 'connected', address: '10.0.0.2:1', clientId: 'CENSYS', username: null });
    for (const line of [
      '1795697571: Client meter1 disconnected.',
      '1795697571: Client meter1 closed its connection.',
      '1795697571: Client meter1 has exceeded timeout, disconnecting.',
      '1795697571: Client meter1 disconnected due to oversize packet.',
      '1795697571: Client meter1 been disconnected by administrative action.',
      '1795697571: Socket error on client meter1, disconnecting.',
    ])
      expect([line, parseBrokerLogLine(line)]).toEqual([line, { kind: 'disconnected', clientId: 'meter1' }]);
    expect(parseBrokerLogLine('1795697570: Client <unknown> disconnected, not authorised.')).toEqual({
      kind: 'refused',
      clientId: null,
    });
    expect(parseBrokerLogLine('1795697570: Client DVES_DDEEFF disconnected, not authorised.')).toEqual({
      kind: 'refused',
      clientId: 'DVES_DDEEFF',
    });
    expect(
      parseBrokerLogLine(
        '2026-05-11 11:55:42: Client shellypro3em-aabbccddeeff [192.168.178.129:45875] disconnected: not authorised.',
      ),
    ).toEqual({ kind: 'refused', clientId: 'shellypro3em-aabbccddeeff' });
    expect(parseBrokerLogLine('1795697570: New connection from 127.0.0.1:33286 on port 1883.')).toBeNull();
    expect(parseBrokerLogLine('1795697570: Client <unknown> closed its connection.')).toBeNull();
  });

  it('finds a device key in a client id', () => {
    expect(deviceKeyInClientId(`shellypro3em-${KEY}`)).toBe(KEY);
    expect(deviceKeyInClientId(KEY.toUpperCase())).toBe(KEY);
    expect(deviceKeyInClientId('DVES_DDEEFF')).toBeNull();
    expect(deviceKeyInClientId('kilowatch-dynsec-5083f051f5951')).toBeNull();
  });
});

describe('brokerLogState', () => {
  const at = Date.UTC(2026, 2, 29, 1, 30);

  it('tracks a meter connected under its account and puts refused logins of its client id on it', async () => {
    const s = brokerLogState({ now: () => at });
    await s.line(`1: New client connected from 10.0.0.5:4000 as my-meter (p2, c1, k60, u'${KEY}').`);
    expect(s.connection(KEY)).toEqual({ connected: true, lastConnectedAt: at });
    await s.line('2: Client my-meter been disconnected by administrative action.');
    expect(s.connection(KEY)).toEqual({ connected: false, lastConnectedAt: at });
    // 2.0.11: nobody to put it on.
    await s.line('3: Client <unknown> disconnected, not authorised.');
    expect(s.unattributedRefusals()).toBe(1);
    expect(s.connection(KEY)?.lastRejection).toBeUndefined();
    // Later releases name the client: the one seen with the meter's account.
    await s.line('4: Client my-meter disconnected, not authorised.');
    expect(s.connection(KEY)?.lastRejection).toMatchObject({ reason: 'bad-password', at });
    // A client id never seen and naming nothing is not put on anyone.
    await s.line('5: Client someone disconnected, not authorised.');
    expect(s.unattributedRefusals()).toBe(2);
  });

  it('a connect under another account with a client id in use ends the connection of the meter that held it', async () => {
    const s = brokerLogState({ now: () => at });
    const bob = '112233445566';
    // Mosquitto 2.0's lines when a second account connects with a client id in use.
    await s.line(`1: New client connected from 10.0.0.5:4000 as DVES_DDEEFF (p2, c1, k60, u'${KEY}').`);
    expect(s.connection(KEY)?.connected).toBe(true);
    await s.line('2: Client DVES_DDEEFF already connected, closing old connection.');
    await s.line(`2: New client connected from 10.0.0.9:4100 as DVES_DDEEFF (p2, c1, k60, u'${bob}').`);
    expect(s.connection(KEY)).toEqual({ connected: false, lastConnectedAt: at });
    expect(s.connection(bob)?.connected).toBe(true);
    // The taker's disconnection is his; a second client of the first meter keeps it connected.
    await s.line(`3: New client connected from 10.0.0.5:4001 as ${KEY}-other (p2, c1, k60, u'${KEY}').`);
    await s.line('4: Client DVES_DDEEFF disconnected.');
    expect(s.connection(bob)?.connected).toBe(false);
    expect(s.connection(KEY)?.connected).toBe(true);
  });

  it('puts a refused stock Tasmota or Shelly login on the device its client id names', async () => {
    const s = brokerLogState({
      now: () => at,
      tasmotaDevice: async (suffix) => (suffix.toLowerCase() === KEY.slice(6) ? KEY : null),
    });
    await s.line('1: Client DVES_DDEEFF disconnected, not authorised.');
    expect(s.connection(KEY)).toMatchObject({ connected: false, lastRejection: { reason: 'bad-password' } });
    const other = '112233445566';
    await s.line(`1: Client shellypro3em-${other} [1.2.3.4:5] disconnected: not authorised.`);
    expect(s.connection(other)?.lastRejection).toMatchObject({ reason: 'bad-password' });
    await s.line('1: Client DVES_000000 disconnected, not authorised.');
    expect(s.unattributedRefusals()).toBe(1);
  });

  it("keeps ingest's refusals of a meter's payloads, and ignores what is not one", () => {
    const s = brokerLogState({ now: () => at });
    const topic = `kilowatch/meters/${KEY}/readings`;
    s.rejected(
      `kilowatch/live/${KEY}/rejected`,
      Buffer.from(JSON.stringify({ topic, reason: 'invalid-json', detail: 'Unexpected token', at: 1 })),
    );
    expect(s.connection(KEY)?.lastRejection).toEqual({
      reason: 'payload-rejected',
      topic,
      at,
      detail: 'invalid-json: Unexpected token',
    });
    s.rejected('kilowatch/live/not-a-key/rejected', Buffer.from('{"topic":"x","reason":"y"}'));
    s.rejected('kilowatch/live/112233445566/rejected', Buffer.from('{not json'));
    expect(s.connection('112233445566')).toBeUndefined();
  });
});
