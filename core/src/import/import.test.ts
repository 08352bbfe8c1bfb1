import { describe, expect, it } from 'vitest';
import { counterRules, energyPerBucket } from '../energy.ts';
import type { Reading } from '../readings.ts';
import {
  addLocalDays,
  calendarBucketStarts,
  fixedBucketStarts,
  HOUR_MS,
  MINUTE_MS,
  zonedTimeToUtc,
} from '../time.ts';
import {
  HistoryImportError,
  type HistoryImportOptions,
  HistoryParser,
  type HistoryRowError,
  type HistorySummary,
  parseHistory,
} from './index.ts';

const KEY = '0123456789ab';
const TZ = 'Europe/Warsaw';

interface Result {
  readings: Reading[];
  errors: HistoryRowError[];
  /** The line of each reading's values (beside `readings`). */
  lines: Record<string, number>[];
  summary: HistorySummary;
}

/** Feeds the text in chunks of `size` bytes (UTF-8; the whole text when omitted). */
function run(options: HistoryImportOptions, text: string, size?: number): Result {
  const p = new HistoryParser(options);
  const readings: Reading[] = [];
  const errors: HistoryRowError[] = [];
  const lines: Record<string, number>[] = [];
  const bytes = new TextEncoder().encode(text);
  const step = size ?? Math.max(bytes.length, 1);
  for (let i = 0; i < bytes.length; i += step) {
    const b = p.feed(bytes.subarray(i, i + step));
    readings.push(...b.readings);
    errors.push(...b.errors);
    lines.push(...b.lines);
  }
  const last = p.finish();
  readings.push(...last.readings);
  errors.push(...last.errors);
  lines.push(...last.lines);
  expect(lines).toHaveLength(readings.length);
  return { readings, errors, lines, summary: p.summary };
}

function series(readings: readonly Reading[], param: string) {
  return readings
    .filter((r) => r.values[param] !== undefined)
    .map((r) => ({ ts: r.ts, value: r.values[param]! }));
}

/** Energy of the parameter per local day of `days` starting at the date, by core's energy function. */
function dailyEnergy(readings: readonly Reading[], param: string, date: string, days = 1) {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const from = zonedTimeToUtc(y, m, d, 0, 0, 0, TZ);
  const to = addLocalDays(from, days, TZ);
  return energyPerBucket(
    series(readings, param),
    calendarBucketStarts(from, to, 'day', TZ),
    to,
    counterRules(param),
  );
}

function hourlyEnergy(readings: readonly Reading[], param: string, from: number, to: number) {
  return energyPerBucket(
    series(readings, param),
    fixedBucketStarts(from, to, HOUR_MS),
    to,
    counterRules(param),
  ).energy;
}

const pad = (n: number) => String(n).padStart(2, '0');

describe('local time across the autumn change (Europe/Warsaw, 2026-10-25: 25 hours)', () => {
  // Quarter-hour register readings in wall-clock time: 02:00–02:45 appears twice.
  const wall: string[] = [];
  for (let h = 0; h < 24; h++) {
    for (const rep of h === 2 ? [0, 1] : [0]) {
      void rep;
      for (let q = 0; q < 4; q++) wall.push(`2026-10-25 ${pad(h)}:${pad(q * 15)}`);
    }
  }
  wall.push('2026-10-26 00:00');
  const text = `time,energy\n${wall.map((w, i) => `${w},${(1000 + i * 0.25).toFixed(2)}`).join('\n')}\n`;
  const options: HistoryImportOptions = {
    format: 'csv',
    deviceKey: KEY,
    mapping: {
      timestamp: { column: 'time', format: 'YYYY-MM-DD HH:mm[:ss]' },
      zone: TZ,
      values: [{ column: 'energy', param: 'eai1' }],
    },
  };

  it('reads the repeated hour in file order: 101 readings 15 minutes apart, a 25 kWh day', () => {
    const { readings, errors, summary } = run(options, text);
    expect(errors).toEqual([]);
    expect(readings).toHaveLength(101);
    expect(readings[0]).toEqual({
      deviceKey: KEY,
      ts: Date.parse('2026-10-24T22:00:00Z'),
      values: { eai1: 1000 },
    });
    expect(readings.at(-1)!.ts).toBe(Date.parse('2026-10-25T23:00:00Z'));
    for (let i = 1; i < readings.length; i++)
      expect(readings[i]!.ts - readings[i - 1]!.ts).toBe(15 * MINUTE_MS);
    // The first 02:00 is summer time (+02:00), the second winter time (+01:00).
    expect(readings[8]!.ts).toBe(Date.parse('2026-10-25T00:00:00Z'));
    expect(readings[12]!.ts).toBe(Date.parse('2026-10-25T01:00:00Z'));
    expect(dailyEnergy(readings, 'eai1', '2026-10-25').energy).toEqual([25]);
    expect(summary).toMatchObject({ rows: 101, readings: 101, duplicates: 0, errors: 0 });
  });

  it('takes an offset written in the stamp as it is, whatever the order', () => {
    const { readings, errors } = run(
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 1, format: 'iso' },
          header: false,
          zone: TZ,
          values: [{ column: 2, param: 'vave1' }],
        },
      },
      '2026-10-25T02:30+01:00,231\n2026-10-25T02:30+02:00,230\n2026-10-25 02:30,229\n',
    );
    expect(readings.map((r) => [new Date(r.ts).toISOString(), r.values.vave1])).toEqual([
      ['2026-10-25T00:30:00.000Z', 230],
      ['2026-10-25T01:30:00.000Z', 231],
    ]);
    // The third row, without an offset, follows a row at the earlier 02:30: it is the repeated hour's
    // second 02:30, the instant of the first row, with another value.
    expect(errors).toEqual([
      {
        line: 3,
        reason: 'duplicate stamp 2026-10-25T01:30:00Z with a different value: vave1 231 on line 1, 229 here',
      },
    ]);
  });
});

describe('the spring gap (Europe/Warsaw, 2026-03-29)', () => {
  it('a stamp the clocks skip is a row error naming the jump; the other rows are read', () => {
    const { readings, errors } = run(
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 'Czas', format: 'DD.MM.YYYY HH:mm' },
          separator: ';',
          values: [{ column: 'U1', param: 'vave1' }],
        },
      },
      'Czas;U1\n29.03.2026 01:30;230\n29.03.2026 02:30;231\n29.03.2026 03:30;232\n',
    );
    expect(errors).toEqual([
      {
        line: 3,
        column: 'Czas',
        reason: '29.03.2026 02:30 does not exist in Europe/Warsaw: the clocks jump from 02:00 to 03:00',
      },
    ]);
    expect(readings.map((r) => new Date(r.ts).toISOString())).toEqual([
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
    ]);
  });
});

describe('counter resets', () => {
  it('pass through as readings; core energy counts the day without the drop', () => {
    const text = [
      'ts,import',
      '2026-01-10T00:00:00Z,100.0',
      '2026-01-10T06:00:00Z,101.5',
      '2026-01-10T12:00:00Z,103.0',
      // The meter was replaced: its register starts again.
      '2026-01-10T13:00:00Z,0.2',
      '2026-01-10T18:00:00Z,1.7',
      '2026-01-11T00:00:00Z,2.0',
    ].join('\n');
    const { readings, errors } = run(
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 'ts', format: 'iso' },
          values: [{ column: 'import', param: 'eai1' }],
        },
      },
      `${text}\n`,
    );
    expect(errors).toEqual([]);
    expect(readings.map((r) => r.values.eai1)).toEqual([100, 101.5, 103, 0.2, 1.7, 2]);
    // 2026-01-10 in Warsaw is 2026-01-09T23:00Z to 2026-01-10T23:00Z: 1.5 + 1.5 + 0 (reset) + 1.5 = 4.5,
    // the last 0.3 belongs to the next local day.
    const day = dailyEnergy(readings, 'eai1', '2026-01-10', 2);
    expect(day.energy[0]).toBeCloseTo(4.5, 9);
    expect(day.energy[1]).toBeCloseTo(0.3, 9);
    expect(day.events.map((e) => [e.kind, new Date(e.at).toISOString()])).toEqual([
      ['reset', '2026-01-10T13:00:00.000Z'],
    ]);
  });
});

describe('hourly energy from a Polish portal (semicolons, decimal commas, stamped at the hour end)', () => {
  // The autumn day: the hour ending 02:00 appears twice (summer, then winter time), 24:00 ends the day.
  const hours: string[] = [];
  for (let h = 1; h <= 24; h++) {
    hours.push(`${pad(h)}:00`);
    if (h === 2) hours.push('02:00');
  }
  const kwh = hours.map((_, i) => ((i * 37) % 100) / 100 + 0.1 + (i % 3) / 1000);
  const text = `Data;Godzina;Zużycie [kWh]\r\n${hours
    .map((h, i) => `2026-10-25;${h};${kwh[i]!.toFixed(3).replace('.', ',')}`)
    .join('\r\n')}\r\n`;
  const options: HistoryImportOptions = {
    format: 'csv',
    deviceKey: KEY,
    mapping: {
      timestamp: { column: ['Data', 'Godzina'], format: 'YYYY-MM-DD HH:mm' },
      zone: TZ,
      separator: ';',
      decimal: ',',
      stamp: 'end',
      interval: 60,
      values: [{ column: 'Zużycie [kWh]', param: 'energy3phases_import', kind: 'interval' }],
    },
  };

  it('becomes register readings whose (start, end] hours hold exactly the file’s energies', () => {
    const { readings, errors } = run(options, text);
    expect(errors).toEqual([]);
    // A starting reading at the first hour's start, then one at each hour's end with the running sum.
    expect(readings).toHaveLength(26);
    const dayStart = Date.parse('2026-10-24T22:00:00Z');
    const dayEnd = Date.parse('2026-10-25T23:00:00Z');
    expect(readings[0]).toEqual({ deviceKey: KEY, ts: dayStart, values: { energy3phases_import: 0 } });
    expect(readings.at(-1)!.ts).toBe(dayEnd);
    const perHour = hourlyEnergy(readings, 'energy3phases_import', dayStart, dayEnd);
    expect(perHour).toHaveLength(25);
    for (const [i, e] of perHour.entries()) expect(e).toBeCloseTo(Number(kwh[i]!.toFixed(3)), 12);
    const total = kwh.reduce((s, v) => s + Number(v.toFixed(3)), 0);
    expect(dailyEnergy(readings, 'energy3phases_import', '2026-10-25').energy[0]).toBeCloseTo(total, 9);
    // The running sum is exact: the last register is the decimal sum of the file's cells.
    const exact = hours.reduce((s, _, i) => s + Math.round(Number(kwh[i]!.toFixed(3)) * 1000), 0) / 1000;
    expect(readings.at(-1)!.values.energy3phases_import).toBe(exact);
  });

  it('stamped at the hour start, in Wh, with thousands grouped by spaces', () => {
    const { readings, errors } = run(
      {
        ...options,
        mapping: {
          ...options.mapping,
          timestamp: { column: 'Od', format: 'DD.MM.YYYY HH:mm' },
          stamp: 'start',
          values: [{ column: 'Wh', param: 'eai1', unit: 'Wh', kind: 'interval' }],
        },
      } as HistoryImportOptions,
      'Od;Wh\n10.01.2026 00:00;1 250,5\n10.01.2026 01:00;980\n10.01.2026 02:00;\n10.01.2026 03:00;1 000\n',
    );
    expect(errors).toEqual([]);
    expect(readings.map((r) => [new Date(r.ts).toISOString().slice(11, 16), r.values.eai1])).toEqual([
      ['23:00', 0],
      ['00:00', 1.2505],
      ['01:00', 2.2305],
      // The empty hour is a gap: no reading; the next hour's energy lands in its own hour.
      ['03:00', 3.2305],
    ]);
    const from = Date.parse('2026-01-09T23:00:00Z');
    const perHour = hourlyEnergy(readings, 'eai1', from, from + 4 * HOUR_MS);
    expect(perHour[0]).toBeCloseTo(1.2505, 12);
    expect(perHour[1]).toBeCloseTo(0.98, 12);
    expect(perHour[2]).toBeNull();
    expect(perHour[3]).toBeCloseTo(1, 12);
  });
});

describe('duplicates', () => {
  const options: HistoryImportOptions = {
    format: 'csv',
    deviceKey: KEY,
    mapping: {
      timestamp: { column: 'time', format: 'iso' },
      zone: TZ,
      values: [
        { column: 'kwh', param: 'eai1', kind: 'interval' },
        { column: 'v', param: 'vave1' },
      ],
    },
  };

  it('drops exact duplicate rows and reports a stamp repeated with another value', () => {
    const text = [
      'time,kwh,v',
      '2026-01-10 01:00,1.5,230',
      '2026-01-10 01:00,1.5,230',
      '2026-01-10 02:00,2.0,231',
      '2026-01-10 02:00,2.5,231',
      '2026-01-10 03:00,1.0,232',
    ].join('\n');
    const { readings, errors, summary } = run(options, `${text}\n`);
    expect(summary.duplicates).toBe(1);
    expect(errors).toEqual([
      {
        line: 5,
        reason: 'duplicate stamp 2026-01-10T01:00:00Z with a different value: eai1 2 on line 4, 2.5 here',
      },
    ]);
    // The repeated interval is counted once: 1.5 + 2.0 + 1.0.
    expect(series(readings, 'eai1').map((p) => p.value)).toEqual([0, 1.5, 3.5, 4.5]);
    expect(series(readings, 'vave1').map((p) => p.value)).toEqual([230, 231, 232]);
    // Readings at the same instant are merged: one per stamp.
    expect(new Set(readings.map((r) => r.ts)).size).toBe(readings.length);
  });
});

describe('a truncated file', () => {
  it('a last line cut short is a row error, not a crash', () => {
    const { readings, errors, summary } = run(
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 'time', format: 'iso' },
          values: [
            { column: 'v1', param: 'vave1' },
            { column: 'v2', param: 'vave2' },
          ],
        },
      },
      'time,v1,v2\n2026-01-10T00:00Z,230,231\n2026-01-10T00:01Z,23',
    );
    expect(readings).toHaveLength(1);
    expect(summary.endsWithoutNewline).toBe(true);
    expect(errors).toEqual([
      {
        line: 3,
        column: 'v2',
        reason:
          'too few columns: 2, the mapping reads 3 (the last line ends without a line break: the file may be truncated)',
      },
    ]);
  });

  it('an unclosed quote at the end and a bad number are row errors too', () => {
    const { errors } = run(
      { format: 'kilowatch', deviceKey: KEY },
      'timestamp_utc,timestamp_local (UTC),device,vave1\n2026-01-10 00:00:00,2026-01-10 00:00:00,Meter,2x0\n2026-01-10 00:01:00,2026-01-10 00:01:00,"Met',
    );
    expect(errors).toEqual([
      { line: 2, column: 'vave1', reason: "bad number '2x0'" },
      { line: 3, reason: 'a quoted cell is not closed before the end of the file (is it truncated?)' },
    ]);
  });
});

describe('InfluxDB line protocol', () => {
  const lines = [
    '# exported from InfluxDB',
    'energy,meter=Main\\ board\\,\\ L1,site=home eai=101.5,eae=3.25 1768003200000000000',
    'energy,meter=Garage,site=home eai=7.0,eae=0.0 1768003200000000000',
    'energy,meter=Main\\ board\\,\\ L1,site=home eai=102.25,eae=3.5 1768006800000000000',
    'grid\\ quality,meter=Main\\ board\\,\\ L1 volts=231.4,label="a \\"quoted\\" text",count=3i 1768006800000000000',
    'energy,meter=Main\\ board\\,\\ L1,site=home eai="broken" 1768010400000000000',
    '',
  ].join('\n');
  const options: HistoryImportOptions = {
    format: 'line-protocol',
    deviceKey: KEY,
    mapping: {
      tags: { meter: 'Main board, L1' },
      fields: [
        { measurement: 'energy', field: 'eai', param: 'eai1' },
        { measurement: 'energy', field: 'eae', param: 'eae1' },
        { measurement: 'grid quality', field: 'volts', param: 'vave1' },
      ],
    },
  };

  it('reads two fields a line, escaped tags and measurements, and merges lines of one instant', () => {
    const { readings, errors, summary } = run(options, lines);
    expect(readings).toEqual([
      { deviceKey: KEY, ts: Date.parse('2026-01-10T00:00:00Z'), values: { eai1: 101.5, eae1: 3.25 } },
      {
        deviceKey: KEY,
        ts: Date.parse('2026-01-10T01:00:00Z'),
        values: { eai1: 102.25, eae1: 3.5, vave1: 231.4 },
      },
    ]);
    expect(errors).toEqual([{ line: 6, column: 'eai', reason: "field 'eai' holds a string, not a number" }]);
    // The comment, the other meter's line and the blank end.
    expect(summary.skipped).toBe(2);
  });

  it('takes the precision of the timestamps', () => {
    const { readings, errors } = run(
      { ...options, mapping: { ...options.mapping, precision: 's' } } as HistoryImportOptions,
      'energy,meter=Main\\ board\\,\\ L1 eai=1i,eae=2 1768003200\n',
    );
    expect(errors).toEqual([]);
    expect(readings).toEqual([
      { deviceKey: KEY, ts: Date.parse('2026-01-10T00:00:00Z'), values: { eai1: 1, eae1: 2 } },
    ]);
  });
});

describe('Kilowatch CSV export round trip', () => {
  // Built in exactly the format api/src/exports/files.ts writes (that writer lives in api, which core may
  // not import): two header rows, CRLF line ends, UTC and local stamps, the device's name as a text cell.
  const exportOf = (device: string, rows: [string, string, string, string][]) =>
    [
      'Time (UTC),Local time (Europe/Warsaw),Device,Voltage L1 (V),"Power, max L1 (W)",Active energy import L1 (kWh)',
      'timestamp_utc,timestamp_local (Europe/Warsaw),device,vave1,pmax1,eai1',
      ...rows.map(([utc, v, p, e]) => {
        const local = new Date(Date.parse(`${utc.replace(' ', 'T')}Z`) + HOUR_MS).toISOString();
        return `${utc},${local.slice(0, 10)} ${local.slice(11, 19)},${device},${v},${p},${e}`;
      }),
    ]
      .map((l) => `${l}\r\n`)
      .join('');
  const kitchen = exportOf('"Kitchen, north"', [
    ['2026-01-10 00:00:00', '230.1', '1200', '100.5'],
    ['2026-01-10 00:01:00', '229.8', '', '100.52'],
    ['2026-01-10 00:02:00', '', '', '100.54'],
  ]);
  const garage = exportOf("'=Garage", [['2026-01-10 00:00:00', '231', '50', '7']]);

  it('reads back the readings of one device', () => {
    const { readings, errors, summary } = run({ format: 'kilowatch', deviceKey: KEY }, kitchen);
    expect(errors).toEqual([]);
    expect(readings).toEqual([
      {
        deviceKey: KEY,
        ts: Date.parse('2026-01-10T00:00:00Z'),
        values: { vave1: 230.1, pmax1: 1200, eai1: 100.5 },
      },
      { deviceKey: KEY, ts: Date.parse('2026-01-10T00:01:00Z'), values: { vave1: 229.8, eai1: 100.52 } },
      { deviceKey: KEY, ts: Date.parse('2026-01-10T00:02:00Z'), values: { eai1: 100.54 } },
    ]);
    expect(summary.devices).toEqual(['Kitchen, north']);
  });

  it('of several devices reads the one named, and refuses to guess', () => {
    const both = kitchen + garage;
    const { readings, summary } = run({ format: 'kilowatch', deviceKey: KEY, sourceDevice: '=Garage' }, both);
    expect(readings).toEqual([
      { deviceKey: KEY, ts: Date.parse('2026-01-10T00:00:00Z'), values: { vave1: 231, pmax1: 50, eai1: 7 } },
    ]);
    expect(summary.skipped).toBe(3);
    expect(summary.devices).toEqual(['Kitchen, north', '=Garage']);
    expect(() => run({ format: 'kilowatch', deviceKey: KEY }, both)).toThrow(
      /several devices \('Kitchen, north', '=Garage'\): choose one with sourceDevice/,
    );
    expect(() => run({ format: 'kilowatch', deviceKey: KEY, sourceDevice: 'Attic' }, both)).toThrow(
      /no readings of device 'Attic'/,
    );
  });
});

describe('chunk boundaries', () => {
  const files: [string, HistoryImportOptions, string][] = [
    [
      'csv with a multi-byte header and a quoted cell across lines',
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 'Data', format: 'YYYY-MM-DD HH:mm' },
          separator: ';',
          decimal: ',',
          values: [{ column: 'Zużycie [kWh]', param: 'eai1', kind: 'interval' }],
        },
      },
      'Uwagi;Data;Zużycie [kWh]\r\n"ż\r\nź";2026-01-10 01:00;0,5\r\n;2026-01-10 02:00;1,25\r\n;2026-01-10 03:00;x\r\n;2026-01-10 04:00;0,25',
    ],
    [
      'line protocol',
      {
        format: 'line-protocol',
        deviceKey: KEY,
        mapping: { precision: 'ms', fields: [{ field: 'u', param: 'vave1' }] },
      },
      'm,t=a\\ b u=230.5 1768003200000\nm u=231 1768003260000\nm u="x" 1768003320000\nm u=232 17680033',
    ],
  ];

  it.each(files)('%s: 1-byte, 7-byte and whole chunks give the same result', (_name, options, text) => {
    const whole = run(options, text);
    expect(whole.readings.length).toBeGreaterThan(1);
    expect(whole.errors.length).toBeGreaterThan(0);
    for (const size of [1, 7]) {
      const chunked = run(options, text, size);
      expect(chunked.readings).toEqual(whole.readings);
      expect(chunked.errors).toEqual(whole.errors);
      expect(chunked.lines).toEqual(whole.lines);
      expect(chunked.summary).toEqual(whole.summary);
    }
  });

  it('reads an async stream of strings and bytes', async () => {
    async function* source() {
      yield 'time,v\n2026-01-10T00:00Z,2';
      yield new TextEncoder().encode('30\n2026-01-10T00:01Z,231\n');
    }
    const batches = [];
    const it = parseHistory(source(), {
      format: 'csv',
      deviceKey: KEY,
      mapping: { timestamp: { column: 'time', format: 'iso' }, values: [{ column: 'v', param: 'vave1' }] },
    });
    let next = await it.next();
    while (!next.done) {
      batches.push(next.value);
      next = await it.next();
    }
    expect(batches.flatMap((b) => b.readings.map((r) => r.values.vave1))).toEqual([230, 231]);
    expect(next.value).toMatchObject({ rows: 2, readings: 2, lines: 3 });
  });
});

describe('the line of each value', () => {
  it('an interval energy names its row, the reading of 0 at the first start too', () => {
    const { readings, lines } = run(
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 'time', format: 'iso' },
          stamp: 'end',
          interval: 60,
          values: [
            { column: 'kwh', param: 'eai1', kind: 'interval' },
            { column: 'v', param: 'vave1' },
          ],
        },
      },
      'time,kwh,v\n# a comment\n2026-01-10T01:00Z,0.5,230\n\n2026-01-10T02:00Z,1,231\n',
    );
    expect(readings.map((r) => r.values)).toEqual([
      { eai1: 0 },
      { eai1: 0.5, vave1: 230 },
      { eai1: 1.5, vave1: 231 },
    ]);
    expect(lines).toEqual([{ eai1: 3 }, { eai1: 3, vave1: 3 }, { eai1: 5, vave1: 5 }]);
  });

  it('line protocol: fields of one time on two lines name each their own', () => {
    const { readings, lines } = run(
      {
        format: 'line-protocol',
        deviceKey: KEY,
        mapping: {
          precision: 'ms',
          fields: [
            { field: 'u', param: 'vave1' },
            { field: 'i', param: 'iave1' },
          ],
        },
      },
      'm u=230 1768003200000\nm i=5 1768003200000\nm u=231,i=6 1768003260000\n',
    );
    expect(readings.map((r) => r.values)).toEqual([
      { vave1: 230, iave1: 5 },
      { vave1: 231, iave1: 6 },
    ]);
    expect(lines).toEqual([
      { vave1: 1, iave1: 2 },
      { vave1: 3, iave1: 3 },
    ]);
  });
});

describe('options', () => {
  it('refuses unknown parameters, units and zones with every problem named', () => {
    let error: unknown;
    try {
      new HistoryParser({
        format: 'csv',
        deviceKey: 'nope',
        mapping: {
          timestamp: { column: 'time', format: 'YYYY-MM-DD hh:mm' },
          zone: 'Europe/Atlantis',
          values: [
            { column: 'a', param: 'eai4' },
            { column: 'b', param: 'vave1', unit: 'kWh' },
            { column: 'c', param: 'vave2', kind: 'interval' },
          ],
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HistoryImportError);
    expect((error as HistoryImportError).problems).toEqual([
      'deviceKey must be 12 lowercase hex digits',
      "unknown letter 'h' in the stamp format 'YYYY-MM-DD hh:mm' (use YYYY MM DD HH mm ss SSS Z)",
      "unknown parameter 'eai4'",
      'vave1 is in V: it takes no energy unit',
      'vave2 is a gauge, not an energy counter: it cannot take interval energies',
      "unknown time zone 'Europe/Atlantis'",
    ]);
  });

  it('a mapped column missing from the header stops the import', () => {
    expect(() =>
      run(
        {
          format: 'csv',
          deviceKey: KEY,
          mapping: {
            timestamp: { column: 'time', format: 'iso' },
            values: [{ column: 'kWh', param: 'eai1' }],
          },
        },
        'time,energy\n2026-01-10T00:00Z,1\n',
      ),
    ).toThrow("line 1: column 'kWh' is not in the header (it has 'time', 'energy')");
  });

  it('a stamp outside 2000–2100 points at a wrong format', () => {
    const { errors } = run(
      {
        format: 'csv',
        deviceKey: KEY,
        mapping: {
          timestamp: { column: 1, format: 'epoch-ms' },
          header: false,
          values: [{ column: 2, param: 'vave1' }],
        },
      },
      '1768003200,230\n',
    );
    expect(errors[0]!.reason).toMatch(/^stamp '1768003200' is before 2000 .*is the stamp format right\?$/);
  });
});
