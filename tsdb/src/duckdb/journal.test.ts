import { describe, expect, it } from 'vitest';
import { journalRecord, parseJournal } from './journal.ts';

const a = [{ deviceKey: 'a1', ts: 1, values: { vave1: 230 } }];
const b = [{ deviceKey: 'b2', ts: 2, values: { eai1: 1.5, vave2: 231 } }];

describe('write journal records', () => {
  it('reads back every complete record in order', () => {
    expect(parseJournal(Buffer.concat([journalRecord(a), journalRecord(b)]))).toEqual([a, b]);
    expect(parseJournal(Buffer.alloc(0))).toEqual([]);
  });

  it('stops at a record cut short (a crash while appending)', () => {
    const whole = Buffer.concat([journalRecord(a), journalRecord(b)]);
    for (const cut of [1, 7, 8, 20]) expect(parseJournal(whole.subarray(0, whole.length - cut))).toEqual([a]);
  });

  it('stops at a record whose checksum fails', () => {
    const second = journalRecord(b);
    const at = second.length - 3;
    second.writeUInt8(second.readUInt8(at) ^ 0xff, at);
    expect(parseJournal(Buffer.concat([journalRecord(a), second, journalRecord(a)]))).toEqual([a]);
  });
});
