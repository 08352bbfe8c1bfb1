import { describe, expect, it } from 'vitest';
import { columnize } from '../columns.ts';
import { decodeBatch, encodeBatch, journalRecord, parseJournal } from './journal.ts';

const a = columnize([{ deviceKey: 'a1', ts: 1, values: { vave1: 230 } }]);
// Two devices, a parameter missing from some rows, one reading without values (left out of the rows).
const b = columnize([
  { deviceKey: 'b2', ts: 2, values: { eai1: 1.5, vave2: 231 } },
  { deviceKey: 'c3', ts: 3, values: { vave2: 229.5 } },
  { deviceKey: 'c3', ts: 4, values: {} },
  ...Array.from({ length: 70 }, (_, i) => ({ deviceKey: 'b2', ts: 10 + i, values: { eai1: 2 + i } })),
]);

/** The batch as stored: only the first `rows` entries of each array matter. */
function stored(x: ReturnType<typeof columnize>) {
  return {
    ...x,
    dev: [...x.dev.subarray(0, x.rows)],
    ts: [...x.ts.subarray(0, x.rows)],
    values: x.values.map((v) => [...v.subarray(0, x.rows)]),
    valid: x.valid.map((v, c) => (x.full[c] ? 'full' : [...v])),
  };
}

describe('write journal records', () => {
  it('encodes a batch in columns and decodes the same batch', () => {
    expect(b.full).toContain(false);
    expect(stored(decodeBatch(Buffer.concat(encodeBatch(b))))).toEqual(stored(b));
  });

  it('reads back every complete record in order', () => {
    const got = parseJournal(Buffer.concat([journalRecord(a), journalRecord(b)]));
    expect(got.map(stored)).toEqual([stored(a), stored(b)]);
    expect(parseJournal(Buffer.alloc(0))).toEqual([]);
  });

  it('stops at a record cut short (a crash while appending)', () => {
    const whole = Buffer.concat([journalRecord(a), journalRecord(b)]);
    for (const cut of [1, 7, 8, 20])
      expect(parseJournal(whole.subarray(0, whole.length - cut)).map(stored)).toEqual([stored(a)]);
  });

  it('stops at a record whose checksum fails', () => {
    const second = journalRecord(b);
    const at = second.length - 3;
    second.writeUInt8(second.readUInt8(at) ^ 0xff, at);
    expect(parseJournal(Buffer.concat([journalRecord(a), second, journalRecord(a)])).map(stored)).toEqual([
      stored(a),
    ]);
  });
});
