import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Reading } from '@kilowatch/core';
import { createDuckDbStore, type DuckDbStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HistoryPlan,
  HistoryTally,
  historyArg,
  historyDevices,
  historyReadings,
  planHistory,
} from './_history.ts';

const T0 = Date.parse('2026-01-10T00:00:00Z');
const MIN = 60_000;

/** One device's part of a Kilowatch CSV export: the two header rows, then its rows. */
function exportOf(device: string, rows: [string, string, string, string][]): string {
  return [
    'Time (UTC),Local time (Europe/Warsaw),Device,Voltage L1 [V],Power L1 [W],Energy import L1 [kWh]',
    'timestamp_utc,timestamp_local (Europe/Warsaw),device,vave1,pave1,eai1',
    ...rows.map(([ts, v, p, e]) => `${ts},local,${device},${v},${p},${e}`),
  ]
    .map((l) => `${l}\r\n`)
    .join('');
}

const kitchen = exportOf('Kitchen', [
  ['2026-01-10 00:00:00', '230.1', '1200', '100.5'],
  ['2026-01-10 00:01:00', '229.8', '', '100.52'],
  ['2026-01-10 00:02:00', 'x', '5', '100.54'], // a row error: left out
  ['2026-01-10 00:03:00', '', '', '100.56'],
]);
const garage = exportOf('Garage', [
  ['2026-01-10 00:00:00', '231', '50', '7'],
  ['2026-01-10 02:30:00', '232', '60', '7.25'],
]);
const kitchenReadings = [
  { ts: T0, values: { vave1: 230.1, pave1: 1200, eai1: 100.5 } },
  { ts: T0 + MIN, values: { vave1: 229.8, eai1: 100.52 } },
  { ts: T0 + 3 * MIN, values: { eai1: 100.56 } },
];
const garageReadings = [
  { ts: T0, values: { vave1: 231, pave1: 50, eai1: 7 } },
  { ts: T0 + 150 * MIN, values: { vave1: 232, pave1: 60, eai1: 7.25 } },
];

let dir: string;
let store: DuckDbStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kw-bench-history-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const key = (i: number) => `b0c0de${i.toString(16).padStart(6, '0')}`;

/** Loads the plan onto `devices` bench devices through the bulk path, as benchApp does. */
async function load(plan: HistoryPlan, devices: number, batch = 2): Promise<HistoryTally> {
  const tally = new HistoryTally(plan);
  async function* all(): AsyncGenerator<Reading[]> {
    for (let i = 0; i < devices; i++) yield* historyReadings(tally, i, key(i), batch);
  }
  await store.writeBulk(all());
  return tally;
}

async function stored(i: number) {
  const page = await store.readRaw({
    deviceKey: key(i),
    from: T0 - 86_400_000,
    to: T0 + 86_400_000,
    limit: 1000,
  });
  return page.items;
}

describe('history from a file (--history)', () => {
  it('takes each device of a Kilowatch export of several as a bench device, and repeats them past the end', async () => {
    store = await createDuckDbStore({});
    try {
      const file = path.join(dir, 'two.csv');
      await writeFile(file, kitchen + garage);
      const plan = await planHistory(historyArg(['--history', file])!);
      expect(plan.sources).toEqual(['Kitchen', 'Garage']);
      expect(historyDevices(plan, undefined, 20)).toBe(2);
      expect(historyDevices(plan, 1, 20)).toBe(1);
      const tally = await load(plan, 3);
      expect(await stored(0)).toEqual(kitchenReadings);
      expect(await stored(1)).toEqual(garageReadings);
      expect(await stored(2)).toEqual(kitchenReadings);
      expect(tally.range()).toEqual({ from: T0, to: T0 + 3 * 60 * MIN });
      const used = tally.used();
      expect(used).toMatchObject({
        file: 'two.csv',
        format: 'kilowatch',
        sourceDevices: ['Kitchen', 'Garage', 'Kitchen'],
        benchDevices: 3,
        readings: 8,
        rejected: 2,
        firstReading: '2026-01-10T00:00:00.000Z',
        lastReading: '2026-01-10T02:30:00.000Z',
        from: '2026-01-10T00:00:00.000Z',
        to: '2026-01-10T03:00:00.000Z',
      });
      expect(tally.errors[0]).toMatchObject({ line: 5, column: 'vave1' });
    } finally {
      await store.close();
    }
  });

  it('copies a file of one series (line protocol with a mapping) to every bench device under its own key', async () => {
    store = await createDuckDbStore({});
    try {
      const file = path.join(dir, 'meter.lp');
      const s = T0 / 1000;
      await writeFile(
        file,
        [
          `power,meter=a W=1200,Wh=100500 ${s}`,
          `power,meter=a W=800i,Wh=100520 ${s + 60}`,
          `power,meter=b W=1,Wh=1 ${s + 60}`, // another series: skipped by the mapping's tags
          `power,meter=a Wh=100540 ${s + 120}`,
        ].join('\n'),
      );
      const mapping = {
        tags: { meter: 'a' },
        fields: [
          { field: 'W', param: 'pave1' },
          { field: 'Wh', param: 'eai1', unit: 'Wh' },
        ],
      };
      const args = [
        '--history',
        file,
        '--history-format',
        'line-protocol',
        '--mapping',
        JSON.stringify(mapping),
      ];
      const plan = await planHistory(historyArg([...args, '--precision', 's'])!);
      expect(plan.sources).toEqual([undefined]);
      const devices = historyDevices(plan, undefined, 2);
      expect(devices).toBe(2);
      const tally = await load(plan, devices, 1);
      const want = [
        { ts: T0, values: { pave1: 1200, eai1: 100.5 } },
        { ts: T0 + MIN, values: { pave1: 800, eai1: 100.52 } },
        { ts: T0 + 2 * MIN, values: { eai1: 100.54 } },
      ];
      expect(await stored(0)).toEqual(want);
      expect(await stored(1)).toEqual(want);
      expect(tally.used()).toMatchObject({ sourceDevices: [null, null], rows: 6, readings: 6, rejected: 0 });
    } finally {
      await store.close();
    }
  });

  it('reads a mapped CSV file of hourly energies in the zone given beside the mapping', async () => {
    store = await createDuckDbStore({});
    try {
      const file = path.join(dir, 'portal.csv');
      // Hours in the zone given (not the parser's default, Warsaw), each stamped at its end, kWh with a decimal comma.
      await writeFile(file, 'Data;Godzina;Zużycie [kWh]\n2026-01-10;02:00;0,5\n2026-01-10;03:00;1,25\n');
      const mapping = {
        timestamp: { column: ['Data', 'Godzina'], format: 'YYYY-MM-DD HH:mm' },
        separator: ';',
        decimal: ',',
        values: [{ column: 'Zużycie [kWh]', param: 'eai1', kind: 'interval' }],
      };
      const args = ['--history', file, '--history-format', 'csv', '--mapping', JSON.stringify(mapping)];
      const tally = await load(await planHistory(historyArg([...args, '--zone', 'UTC'])!), 1);
      expect(await stored(0)).toEqual([
        { ts: T0 + 60 * MIN, values: { eai1: 0 } },
        { ts: T0 + 120 * MIN, values: { eai1: 0.5 } },
        { ts: T0 + 180 * MIN, values: { eai1: 1.75 } },
      ]);
      expect(tally.range()).toEqual({ from: T0 + 60 * MIN, to: T0 + 240 * MIN });
    } finally {
      await store.close();
    }
  });

  it('refuses options that make no sense before reading', async () => {
    expect(() => historyArg(['--history', 'x.csv', '--history-format', 'json'])).toThrow(/--history-format/);
    expect(() => historyArg(['--history', 'x.csv', '--history-format', 'csv'])).toThrow(/needs --mapping/);
    const file = path.join(dir, 'x.csv');
    await writeFile(file, 'a,b\n');
    await expect(
      planHistory(historyArg(['--history', file, '--history-format', 'csv', '--mapping', '{"values":[]}'])!),
    ).rejects.toThrow(/timestamp column/);
  });
});
