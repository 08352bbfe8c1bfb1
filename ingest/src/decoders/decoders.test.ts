import { describe, expect, it } from 'vitest';
import { decodeMessage, MAX_PAYLOAD_BYTES } from './index.ts';

const KEY = 'a4cf12b3c4d5';
const NOW = Date.parse('2026-11-22T10:00:30Z');
const opts = { now: NOW };

describe('native decoder', () => {
  it.each([
    [
      'one reading, ISO time',
      { ts: '2026-11-22T10:00:00.000Z', values: { vave1: 231.2, pave1: 1520.5, eai1: 10234.5 } },
      [
        {
          deviceKey: KEY,
          ts: Date.parse('2026-11-22T10:00:00Z'),
          values: { vave1: 231.2, pave1: 1520.5, eai1: 10234.5 },
        },
      ],
    ],
    [
      'an array, epoch ms and seq',
      [
        { ts: NOW - 60_000, seq: 7, values: { tempmain: 21.5, rel1: 1 } },
        { ts: NOW, seq: 8, values: { tempmain: 21.6, rel1: 0 } },
      ],
      [
        { deviceKey: KEY, ts: NOW - 60_000, seq: 7, values: { tempmain: 21.5, rel1: 1 } },
        { deviceKey: KEY, ts: NOW, seq: 8, values: { tempmain: 21.6, rel1: 0 } },
      ],
    ],
    [
      'an offset ISO time',
      { ts: '2026-11-22T11:00:00+01:00', values: { frq1: 49.98 } },
      [{ deviceKey: KEY, ts: Date.parse('2026-11-22T10:00:00Z'), values: { frq1: 49.98 } }],
    ],
  ])('%s', (_name, payload, readings) => {
    const d = decodeMessage(`kilowatch/meters/${KEY}/readings`, JSON.stringify(payload), opts);
    expect(d).toEqual({ kind: 'readings', format: 'native', deviceKey: KEY, readings });
  });

  it('one epoch-ms reading as bytes (the common message): unknown top-level keys are left out', () => {
    const payload = { ts: NOW - 1000, seq: 3, values: { vave1: 230.5, eai1: 12 }, note: 'x' };
    for (const bytes of [
      Buffer.from(JSON.stringify(payload)),
      new TextEncoder().encode(JSON.stringify(payload)),
    ]) {
      expect(decodeMessage(`kilowatch/meters/${KEY}/readings`, bytes, opts)).toEqual({
        kind: 'readings',
        format: 'native',
        deviceKey: KEY,
        readings: [{ deviceKey: KEY, ts: NOW - 1000, seq: 3, values: { vave1: 230.5, eai1: 12 } }],
      });
    }
  });

  it.each([
    [
      { online: true, rssi: -67 },
      { online: true, status: 'online', rssi: -67 },
    ],
    [
      { online: true, rssi: -85 },
      { online: true, status: 'weak-signal', rssi: -85 },
    ],
    [{ online: true }, { online: true, status: 'online' }],
    [{ online: false }, { online: false, status: 'offline' }],
  ])('status %j → %j', (payload, update) => {
    expect(decodeMessage(`kilowatch/meters/${KEY}/status`, JSON.stringify(payload), opts)).toEqual({
      kind: 'status',
      deviceKey: KEY,
      update,
    });
  });
});

describe('rejections', () => {
  const readings = `kilowatch/meters/${KEY}/readings`;
  const ok = (values: object, ts: unknown = NOW) => JSON.stringify({ ts, values });
  it.each([
    ['invalid JSON', readings, '{"ts": 1, "values": {', 'invalid-json'],
    ['wrong-typed value', readings, ok({ vave1: '231' }), 'invalid-payload'],
    ['values as an array', readings, JSON.stringify({ ts: NOW, values: [230] }), 'invalid-payload'],
    ['missing values', readings, JSON.stringify({ ts: NOW }), 'invalid-payload'],
    ['empty values', readings, ok({}), 'invalid-payload'],
    ['unknown parameter', readings, ok({ vave1: 230, vave4: 230 }), 'unknown-parameter'],
    ['voltage out of range', readings, ok({ vave1: 600 }), 'out-of-range'],
    ['negative counter', readings, ok({ eai1: -1 }), 'out-of-range'],
    ['epoch before 2000', readings, ok({ vave1: 230 }, 946_684_799_999), 'timestamp-too-old'],
    ['ISO before 2000', readings, ok({ vave1: 230 }, '1970-01-01T00:00:00Z'), 'timestamp-too-old'],
    ['6 minutes in the future', readings, ok({ vave1: 230 }, NOW + 6 * 60_000), 'timestamp-in-future'],
    ['ISO without zone', readings, ok({ vave1: 230 }, '2026-11-22T10:00:00'), 'invalid-payload'],
    ['fractional epoch', readings, ok({ vave1: 230 }, NOW + 0.5), 'invalid-payload'],
    [
      'negative seq',
      readings,
      JSON.stringify({ ts: NOW, seq: -1, values: { vave1: 230 } }),
      'invalid-payload',
    ],
    ['__proto__ as a parameter', readings, `{"ts":${NOW},"values":{"__proto__":1}}`, 'invalid-payload'],
    ['null value', readings, ok({ vave1: null }), 'invalid-payload'],
    [
      'one bad reading in an array',
      readings,
      JSON.stringify([
        { ts: NOW, values: { vave1: 230 } },
        { ts: NOW, values: { x: 1 } },
      ]),
      'unknown-parameter',
    ],
    ['unknown topic', `kilowatch/devices/${KEY}/readings`, ok({ vave1: 230 }), 'unknown-topic'],
    ['unknown native leaf', `kilowatch/meters/${KEY}/config`, ok({ vave1: 230 }), 'unknown-topic'],
    [
      'upper-case key',
      `kilowatch/meters/${KEY.toUpperCase()}/readings`,
      ok({ vave1: 230 }),
      'invalid-device-key',
    ],
    ['short key', 'kilowatch/meters/a4cf12/readings', ok({ vave1: 230 }), 'invalid-device-key'],
    ['Shelly prefix without a MAC', 'shellypro3em-kitchen/events/rpc', '{}', 'invalid-device-key'],
    ['status with a string flag', `kilowatch/meters/${KEY}/status`, '{"online":"yes"}', 'invalid-payload'],
    [
      'oversized',
      readings,
      `{"ts":${NOW},"values":{"vave1":230},"pad":"${'x'.repeat(MAX_PAYLOAD_BYTES)}"}`,
      'oversized',
    ],
  ])('%s → %s', (_name, topic, payload, reason) => {
    const d = decodeMessage(topic, payload, opts);
    expect(d.kind).toBe('rejected');
    expect(d.kind === 'rejected' && d.reason).toBe(reason);
    expect(d.kind === 'rejected' && d.detail.length).toBeGreaterThan(0);
  });
});

describe('Tasmota decoder', () => {
  const topic = `tele/${KEY}/SENSOR`;
  it.each([
    [
      'single-phase plug (winter: Warsaw is UTC+1)',
      {
        Time: '2026-11-22T11:00:12',
        ENERGY: {
          TotalStartTime: '2025-10-21T22:15:00',
          Total: 3.705,
          Yesterday: 0.028,
          Today: 0.026,
          Period: 1,
          Power: 5,
          ApparentPower: 5,
          ReactivePower: 0,
          Factor: 1.0,
          Voltage: 233,
          Current: 0.021,
        },
      },
      undefined,
      {
        ts: Date.parse('2026-11-22T10:00:12Z'),
        values: { eai1: 3.705, pave1: 5, pfave1: 1, vave1: 233, iave1: 0.021 },
      },
    ],
    [
      'three-phase SDM630 with a summed Total, zone Asia/Kolkata',
      {
        Time: '2026-11-22T15:30:00',
        ENERGY: {
          TotalStartTime: '2024-01-01T00:00:00',
          Total: 15234.12,
          Yesterday: 12.1,
          Today: 3.2,
          Power: [1200, 850, 430],
          ApparentPower: [1260, 900, 470],
          Factor: [0.95, 0.94, 0.92],
          Frequency: 50.01,
          Voltage: [231.4, 229.8, 232.1],
          Current: [5.44, 3.91, 2.02],
          ExportActive: 120.5,
        },
      },
      'Asia/Kolkata',
      {
        ts: Date.parse('2026-11-22T10:00:00Z'),
        values: {
          energy3phases_import: 15234.12,
          energy3phases_export: 120.5,
          pave1: 1200,
          pave2: 850,
          pave3: 430,
          pfave1: 0.95,
          pfave2: 0.94,
          pfave3: 0.92,
          frq1: 50.01,
          vave1: 231.4,
          vave2: 229.8,
          vave3: 232.1,
          iave1: 5.44,
          iave2: 3.91,
          iave3: 2.02,
        },
      },
    ],
    [
      'three-phase PZEM with per-phase totals (SetOption129)',
      {
        Time: '2026-07-01T12:00:00',
        ENERGY: {
          Total: [10.5, 20.25, 30],
          Power: [100, 200, 300],
          Voltage: [230, 231, 232],
          Current: [0.5, 1, 1.5],
        },
      },
      undefined,
      {
        ts: Date.parse('2026-07-01T10:00:00Z'),
        values: {
          eai1: 10.5,
          eai2: 20.25,
          eai3: 30,
          pave1: 100,
          pave2: 200,
          pave3: 300,
          vave1: 230,
          vave2: 231,
          vave3: 232,
          iave1: 0.5,
          iave2: 1,
          iave3: 1.5,
        },
      },
    ],
  ])('%s', (_name, payload, tz, expected) => {
    const d = decodeMessage(topic, JSON.stringify(payload), { now: NOW, timeZoneOf: () => tz });
    expect(d).toEqual({
      kind: 'readings',
      format: 'tasmota',
      deviceKey: KEY,
      readings: [{ deviceKey: KEY, ...expected }],
    });
  });

  it.each([
    [
      'a DS18B20-only frame is ignored',
      { Time: '2026-11-22T11:00:00', DS18B20: { Temperature: 21.3 } },
      'ignored',
    ],
    ['a string Power is rejected', { Time: '2026-11-22T11:00:00', ENERGY: { Power: '5' } }, 'rejected'],
    [
      'four phases are rejected',
      { Time: '2026-11-22T11:00:00', ENERGY: { Voltage: [1, 2, 3, 4] } },
      'rejected',
    ],
    ['a missing Time is rejected', { ENERGY: { Power: 5 } }, 'rejected'],
  ])('%s', (_name, payload, kind) => {
    expect(decodeMessage(topic, JSON.stringify(payload), opts).kind).toBe(kind);
  });
});

describe('Shelly decoder', () => {
  const topic = `${KEY}/events/rpc`;
  const src = 'shellypro3em-a4cf12b3c4d5';
  it.each([
    [
      'Pro 3EM NotifyStatus em:0',
      {
        src,
        dst: `${KEY}/events`,
        method: 'NotifyStatus',
        params: {
          ts: 1_795_341_600.43,
          'em:0': {
            id: 0,
            a_current: 4.029,
            a_voltage: 236.1,
            a_act_power: 951.2,
            a_aprt_power: 951.9,
            a_pf: 1,
            a_freq: 50,
            b_current: 4.027,
            b_voltage: 236.201,
            b_act_power: -951.1,
            b_aprt_power: 951.8,
            b_pf: -1,
            c_current: 3.03,
            c_voltage: 236.402,
            c_act_power: 715.9,
            c_aprt_power: 716.2,
            c_pf: 0.99,
            n_current: null,
            total_current: 11.029,
            total_act_power: 716,
            total_aprt_power: 2619.9,
          },
        },
      },
      {
        ts: 1_795_341_600_430,
        values: {
          iave1: 4.029,
          vave1: 236.1,
          pave1: 951.2,
          pfave1: 1,
          frq1: 50,
          iave2: 4.027,
          vave2: 236.201,
          pave2: -951.1,
          pfave2: -1,
          iave3: 3.03,
          vave3: 236.402,
          pave3: 715.9,
          pfave3: 0.99,
          power3phases: 716,
        },
      },
    ],
    [
      'Pro 3EM NotifyFullStatus emdata:0 (Wh → kWh)',
      {
        src,
        method: 'NotifyFullStatus',
        params: {
          ts: 1_795_341_600,
          sys: { mac: 'A4CF12B3C4D5', uptime: 1234 },
          'emdata:0': {
            id: 0,
            a_total_act_energy: 1_234_567,
            a_total_act_ret_energy: 890,
            b_total_act_energy: 200_000,
            b_total_act_ret_energy: 0,
            c_total_act_energy: 1500.5,
            c_total_act_ret_energy: 0,
            total_act: 1_436_067.5,
            total_act_ret: 890,
          },
        },
      },
      {
        ts: 1_795_341_600_000,
        values: {
          eai1: 1234.567,
          eae1: 0.89,
          eai2: 200,
          eae2: 0,
          eai3: 1.5005,
          eae3: 0,
          energy3phases_import: 1436.0675,
          energy3phases_export: 0.89,
        },
      },
    ],
    [
      'EM Gen3 em1:1 and em1data:1 → phase 2',
      {
        src: 'shellyemg3-a4cf12b3c4d5',
        method: 'NotifyStatus',
        params: {
          ts: 1_795_341_660.1,
          'em1:1': {
            id: 1,
            current: 2.598,
            voltage: 234.9,
            act_power: 501.8,
            aprt_power: 612.4,
            pf: 0.84,
            freq: 50,
          },
          'em1data:1': { id: 1, total_act_energy: 5000, total_act_ret_energy: 12.5 },
        },
      },
      {
        ts: 1_795_341_660_100,
        values: { iave2: 2.598, vave2: 234.9, pave2: 501.8, pfave2: 0.84, eai2: 5, eae2: 0.0125 },
      },
    ],
  ])('%s', (_name, payload, expected) => {
    const d = decodeMessage(topic, JSON.stringify(payload), { now: 1_795_341_700_000 });
    expect(d).toEqual({
      kind: 'readings',
      format: 'shelly',
      deviceKey: KEY,
      readings: [{ deviceKey: KEY, ...expected }],
    });
  });

  it.each([
    ['NotifyEvent is ignored', { method: 'NotifyEvent', params: { ts: 1, events: [] } }, 'ignored'],
    [
      'a wifi-only NotifyStatus is ignored',
      { method: 'NotifyStatus', params: { ts: 1_795_341_600, wifi: { rssi: -60 } } },
      'ignored',
    ],
    [
      'a string voltage is rejected',
      { method: 'NotifyStatus', params: { ts: 1_795_341_600, 'em1:0': { voltage: '230' } } },
      'rejected',
    ],
    [
      'em1:3 has no phase',
      { method: 'NotifyStatus', params: { ts: 1_795_341_600, 'em1:3': { voltage: 230 } } },
      'rejected',
    ],
    ['no ts', { method: 'NotifyStatus', params: { 'em1:0': { voltage: 230 } } }, 'rejected'],
    ['no method', { params: {} }, 'rejected'],
  ])('%s', (_name, payload, kind) => {
    expect(decodeMessage(topic, JSON.stringify(payload), { now: 1_795_341_700_000 }).kind).toBe(kind);
  });
});
