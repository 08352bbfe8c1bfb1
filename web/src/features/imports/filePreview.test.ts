import { describe, expect, it } from 'vitest';
import {
  csvMappingOf,
  detectFormat,
  detectSeparator,
  guessCsvForm,
  guessStampFormat,
  headLines,
  lineProtocolMappingOf,
  previewTable,
  splitCsvLine,
  splitProtocolLine,
} from './filePreview.ts';

const POLISH = 'Data;Godzina;Zużycie [kWh]\r\n2026-01-10;01:00;0,5\r\n2026-01-10;02:00;1,25\r\n';
const KILOWATCH = [
  'Time (UTC),Local time (Europe/Warsaw),Device,Voltage L1 (V)',
  'timestamp_utc,timestamp_local (Europe/Warsaw),device,vave1',
  '2026-01-10 00:00:00,2026-01-10 01:00:00,Kitchen,230.1',
  '2026-01-10 00:01:00,2026-01-10 01:01:00,Garage,229.9',
].join('\n');

describe('headLines', () => {
  it('drops a BOM, blank lines and, for a head cut inside the file, its unfinished last line', () => {
    expect(headLines('\uFEFFa,b\n\n1,2\n3,', false)).toEqual(['a,b', '1,2']);
    expect(headLines('a,b\r\n1,2', true)).toEqual(['a,b', '1,2']);
  });
});

describe('splitCsvLine', () => {
  it.each([
    ['a,b,c', ',', ['a', 'b', 'c']],
    ['"Power, max L1 (W)",2', ',', ['Power, max L1 (W)', '2']],
    ['"say ""hi""";1,5', ';', ['say "hi"', '1,5']],
    ['a\tb', '\t', ['a', 'b']],
  ])('%j at %j', (line, sep, cells) => {
    expect(splitCsvLine(line, sep)).toEqual(cells);
  });
});

describe('detectSeparator', () => {
  it.each([
    ['Data;Godzina;Zużycie [kWh]', ';'],
    ['time,value', ','],
    ['time\tvalue', '\t'],
    ['"a;b;c",d', ','],
    ['single', ','],
  ])('%j → %j', (line, sep) => {
    expect(detectSeparator(line)).toBe(sep);
  });
});

describe('detectFormat', () => {
  it('knows a Kilowatch export by its header, line protocol by its lines, else a CSV to map', () => {
    expect(detectFormat(headLines(KILOWATCH, true))).toBe('kilowatch');
    expect(
      detectFormat([
        '# DML',
        'power,meter=a energy=1.5,p=2i 1736467200000000000',
        'power energy=2 1736467260000000000',
      ]),
    ).toBe('line-protocol');
    expect(detectFormat(headLines(POLISH, true))).toBe('csv');
    expect(detectFormat([])).toBe('csv');
  });
});

describe('previewTable', () => {
  it('shows a Kilowatch export under its code header and lists its devices', () => {
    const t = previewTable(headLines(KILOWATCH, true), 'kilowatch', ',');
    expect(t.columns).toEqual(['timestamp_utc', 'timestamp_local (Europe/Warsaw)', 'device', 'vave1']);
    expect(t.rows).toHaveLength(2);
    expect(t.devices).toEqual(['Kitchen', 'Garage']);
  });

  it('splits a CSV at its separator, at most 20 rows', () => {
    const lines = ['t;v', ...Array.from({ length: 30 }, (_, i) => `${i};1`)];
    const t = previewTable(lines, 'csv', ';');
    expect(t.columns).toEqual(['t', 'v']);
    expect(t.rows).toHaveLength(20);
    expect(t.rows[0]).toEqual(['0', '1']);
  });

  it('lists the measurement and field pairs of line protocol', () => {
    const t = previewTable(['power,meter=a energy=1.5,p=2i 1', 'gas m3=3 2'], 'line-protocol', ',');
    expect(t.rows[0]).toEqual(['power', 'meter=a', 'energy=1.5,p=2i', '1']);
    expect(t.fields).toEqual([
      { measurement: 'power', field: 'energy' },
      { measurement: 'power', field: 'p' },
      { measurement: 'gas', field: 'm3' },
    ]);
    expect(splitProtocolLine('a\\ b,x=1 f=1')).toEqual(['a\\ b', 'x=1', 'f=1', '']);
  });
});

describe('guessStampFormat', () => {
  it.each([
    ['2026-01-10T01:00:00+01:00', 'iso'],
    ['2026-01-10 01:00', 'YYYY-MM-DD HH:mm[:ss]'],
    ['10.01.2026 01:00:00', 'DD.MM.YYYY HH:mm[:ss]'],
    ['1736467200', 'epoch-s'],
    ['1736467200000', 'epoch-ms'],
    ['0,5', null],
  ])('%j → %j', (cell, format) => {
    expect(guessStampFormat(cell)).toBe(format);
  });
});

describe('the CSV mapping', () => {
  const table = previewTable(
    headLines('Czas;Licznik [kWh];Moc\n10.01.2026 01:00;12,5;300\n', true),
    'csv',
    ';',
  );

  it('guesses the stamp column and format, the decimal comma, and leaves values unmapped', () => {
    const form = guessCsvForm(table, ';', 'Europe/Warsaw');
    expect(form).toMatchObject({
      timestampColumn: 'Czas',
      stampFormat: 'DD.MM.YYYY HH:mm[:ss]',
      decimal: ',',
      separator: ';',
      zone: 'Europe/Warsaw',
    });
    expect(form.values.map((v) => [v.column, v.param])).toEqual([
      ['Licznik [kWh]', ''],
      ['Moc', ''],
    ]);
  });

  it("becomes core's CsvMapping: energy with its unit and kind, gauges as they are, unmapped left out", () => {
    const form = guessCsvForm(table, ';', 'Europe/Warsaw');
    form.values[0] = { column: 'Licznik [kWh]', param: 'energy3phases_import', reading: 'interval-Wh' };
    form.interval = '15';
    const energy = (p: string) => p.startsWith('energy');
    expect(csvMappingOf(form, energy)).toEqual({
      timestamp: { column: 'Czas', format: 'DD.MM.YYYY HH:mm[:ss]' },
      separator: ';',
      decimal: ',',
      zone: 'Europe/Warsaw',
      interval: 15,
      stamp: 'end',
      values: [{ column: 'Licznik [kWh]', param: 'energy3phases_import', unit: 'Wh', kind: 'interval' }],
    });
    form.values[1] = { column: 'Moc', param: 'power3phases', reading: 'counter-kWh' };
    form.values[0] = { column: 'Licznik [kWh]', param: 'energy3phases_import', reading: 'counter-kWh' };
    const m = csvMappingOf(form, energy);
    expect(m.interval).toBeUndefined();
    expect(m.values).toEqual([
      { column: 'Licznik [kWh]', param: 'energy3phases_import', unit: 'kWh', kind: 'counter' },
      { column: 'Moc', param: 'power3phases' },
    ]);
  });
});

describe('the line-protocol mapping', () => {
  const clock = { interval: '60', intervalStamp: 'end' as const, zone: 'Europe/Warsaw' };
  const energy = (p: string) => p.startsWith('energy');

  it("becomes core's LineProtocolMapping, interval settings only for interval energies", () => {
    const fields = [
      { measurement: 'power', field: 'kwh', param: 'energy3phases_import', reading: 'interval-kWh' as const },
      { measurement: 'power', field: 'w', param: 'power3phases', reading: 'counter-kWh' as const },
      { measurement: 'power', field: 'other', param: '', reading: 'counter-kWh' as const },
    ];
    expect(lineProtocolMappingOf(fields, 's', clock, energy)).toEqual({
      precision: 's',
      interval: 60,
      stamp: 'end',
      zone: 'Europe/Warsaw',
      fields: [
        { measurement: 'power', field: 'kwh', param: 'energy3phases_import', kind: 'interval', unit: 'kWh' },
        { measurement: 'power', field: 'w', param: 'power3phases' },
      ],
    });
    const counters = lineProtocolMappingOf(
      [{ ...fields[0]!, reading: 'counter-Wh' }],
      'ns',
      { ...clock, interval: 'day' },
      energy,
    );
    expect(counters).toEqual({
      precision: 'ns',
      fields: [
        { measurement: 'power', field: 'kwh', param: 'energy3phases_import', kind: 'counter', unit: 'Wh' },
      ],
    });
  });
});
