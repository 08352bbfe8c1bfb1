import { describe, expect, it } from 'vitest';
import { localTimestampFormatter, numberCell, safeFileName, textCell } from './csv.ts';

describe('CSV cells', () => {
  it.each([
    ['plain', 'plain'],
    ['=SUM(A1:A2)', "'=SUM(A1:A2)"],
    ['+48 123', "'+48 123"],
    ['-1', "'-1"],
    ['@cmd', "'@cmd"],
    ['\tx', "'\tx"],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\nbreak', '"line\nbreak"'],
    ['=1,2', `"'=1,2"`],
  ])('text %j → %j', (input, out) => expect(textCell(input)).toBe(out));

  it.each([
    [-1.5, '-1.5'],
    [230.1, '230.1'],
    [0, '0'],
    [undefined, ''],
    [Number.NaN, ''],
  ])('number %j → %j', (input, out) => expect(numberCell(input)).toBe(out));

  it.each([
    ['2026-03-29T00:59:00Z', '2026-03-29 01:59:00'],
    ['2026-03-29T01:00:00Z', '2026-03-29 03:00:00'],
    ['2026-10-25T00:30:00Z', '2026-10-25 02:30:00'],
    ['2026-10-25T01:30:00Z', '2026-10-25 02:30:00'],
  ])('local time of %s in Warsaw is %s', (utc, local) => {
    expect(localTimestampFormatter('Europe/Warsaw')(Date.parse(utc))).toBe(local);
  });

  it.each([
    ['../../etc/passwd', 'etcpasswd'],
    ['Dom (garaż) 2026', 'Dom_garaz_2026'],
    ['', 'export'],
    ['"quoted";name', 'quotedname'],
  ])('file name %j → %j', (input, out) => expect(safeFileName(input, 'export')).toBe(out));
});
