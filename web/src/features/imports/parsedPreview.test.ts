import { describe, expect, it } from 'vitest';
import { parsePreview } from './parsedPreview.ts';

const HOURS =
  'Data;Godzina;Zużycie [kWh]\r\n2026-01-10;01:00;0,5\r\n2026-01-10;02:00;1,25\r\n2026-01-10;03:00;x\r\n';

describe('parsePreview', () => {
  it("gives the readings core's parser makes of the head: interval energies as a running register", () => {
    const p = parsePreview(HOURS, true, {
      format: 'csv',
      mapping: {
        timestamp: { column: ['Data', 'Godzina'], format: 'YYYY-MM-DD HH:mm' },
        separator: ';',
        decimal: ',',
        zone: 'Europe/Warsaw',
        values: [{ column: 'Zużycie [kWh]', param: 'energy3phases_import', kind: 'interval', unit: 'kWh' }],
      },
    });
    expect(p.problem).toBeNull();
    expect(p.params).toEqual(['energy3phases_import']);
    expect(p.readings.map((r) => [new Date(r.ts).toISOString(), r.values.energy3phases_import])).toEqual([
      ['2026-01-09T23:00:00.000Z', 0],
      ['2026-01-10T00:00:00.000Z', 0.5],
      ['2026-01-10T01:00:00.000Z', 1.75],
    ]);
    expect(p.errors).toHaveLength(1);
    expect(p.errors[0]).toMatchObject({ line: 4, column: 'Zużycie [kWh]' });
  });

  it('says why options cannot start an import (an unknown parameter)', () => {
    const p = parsePreview(HOURS, true, {
      format: 'csv',
      mapping: { timestamp: { column: 'Data', format: 'iso' }, values: [{ column: 'x', param: 'nope' }] },
    });
    expect(p.readings).toEqual([]);
    expect(p.problem).toMatch(/nope/);
  });

  it('does not count a device missing from a head cut inside the file as a problem', () => {
    const head =
      'timestamp_utc,timestamp_local (UTC),device,vave1\n2026-01-10 00:00:00,2026-01-10 00:00:00,A,230\n';
    expect(parsePreview(head, false, { format: 'kilowatch', sourceDevice: 'B' }).problem).toBeNull();
    expect(parsePreview(head, true, { format: 'kilowatch', sourceDevice: 'B' }).problem).toMatch(/'B'/);
    const one = parsePreview(head, true, { format: 'kilowatch' });
    expect(one.readings).toEqual([expect.objectContaining({ values: { vave1: 230 } })]);
  });

  it('reads line protocol with two fields per line', () => {
    const p = parsePreview('power v=230.5,p=1200i 1736467200\npower v=231,p=900i 1736467260\n', true, {
      format: 'line-protocol',
      mapping: {
        precision: 's',
        fields: [
          { field: 'v', param: 'vave1' },
          { field: 'p', param: 'power3phases' },
        ],
      },
    });
    expect(p.problem).toBeNull();
    expect(p.params.sort()).toEqual(['power3phases', 'vave1']);
    expect(p.readings.map((r) => r.ts)).toEqual([1736467200000, 1736467260000]);
    expect(p.readings[0]!.values).toEqual({ vave1: 230.5, power3phases: 1200 });
  });
});
