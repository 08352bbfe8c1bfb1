import type { Reading } from '@kilowatch/core';
import { columnize } from '@kilowatch/tsdb/columns';
import { afterEach, describe, expect, it } from 'vitest';
import { type DecodeThread, startDecodeThread } from './decodeThread.ts';
import { waitFor } from './test/helpers.ts';

/** The bridge's clock as the chunks say it: readings are judged against this instant, not the real one. */
const NOW = Date.parse('2026-11-03T12:00:00Z');
const threads: DecodeThread[] = [];
afterEach(async () => {
  while (threads.length) await threads.pop()?.close();
});

function start(entry?: URL) {
  const failures: unknown[] = [];
  const thread = startDecodeThread((e) => failures.push(e), entry);
  threads.push(thread);
  return { thread, failures };
}

describe('the decode thread', () => {
  it('decodes a chunk in order: readings in columns, the other messages one by one', async () => {
    const { thread } = start();
    await waitFor(() => thread.ready, 30_000, 'the decode thread');
    const ts = NOW - 60_000;
    const readings: Reading[] = [
      { deviceKey: 'a4cf12b3c4d5', ts, values: { vave1: 230.5, eai1: 12 } },
      { deviceKey: 'a4cf12b3c4d5', ts: ts + 1000, values: { vave1: 231, eai1: 12.5 } },
      { deviceKey: 'a4cf12b3c4d6', ts, values: { pave1: 100 } },
    ];
    const reply = await thread.decode(
      [
        {
          topic: 'kilowatch/meters/a4cf12b3c4d5/readings',
          payload: Buffer.from(
            JSON.stringify([readings[0]!, readings[1]!].map(({ ts, values }) => ({ ts, values }))),
          ),
          tz: null,
        },
        { topic: 'kilowatch/meters/a4cf12b3c4d5/readings', payload: '{not json', tz: null },
        { topic: 'kilowatch/meters/a4cf12b3c4d6/status', payload: '{"online":true,"rssi":-90}', tz: null },
        {
          topic: 'kilowatch/meters/a4cf12b3c4d6/readings',
          payload: JSON.stringify({ ts, seq: 7, values: { pave1: 100 } }),
          tz: null,
        },
        {
          topic: 'tele/a4cf12b3c4d7/SENSOR',
          payload: JSON.stringify({ Time: '2026-01-15T12:00:00', ENERGY: { Voltage: 233 } }),
          tz: 'Asia/Kolkata',
        },
      ],
      NOW,
    );
    expect([...reply.counts]).toEqual([2, -1, -1, 1, 1]);
    expect(reply.others.map((o) => [o.i, o.decoded.kind])).toEqual([
      [1, 'rejected'],
      [2, 'status'],
    ]);
    expect(reply.others[0]!.decoded).toMatchObject({ reason: 'invalid-json' });
    expect(reply.others[1]!.decoded).toMatchObject({ update: { status: 'weak-signal', rssi: -90 } });
    // The Tasmota time is local to the zone given with the message (+05:30).
    const tasmota: Reading = {
      deviceKey: 'a4cf12b3c4d7',
      ts: Date.parse('2026-01-15T06:30:00Z'),
      values: { vave1: 233 },
    };
    const expected = columnize([...readings.slice(0, 2), readings[2]!, tasmota]);
    expect(reply.readings).toBeNull();
    expect(reply.columns).toMatchObject({
      rows: 4,
      keys: expected.keys,
      cols: expected.cols,
      full: expected.full,
    });
    expect([...reply.columns!.ts]).toEqual([...expected.ts]);
    expect(reply.columns!.values.map((v) => [...v])).toEqual(expected.values.map((v) => [...v]));
    // The meter's sequence number stays with its row (for the live feed); NaN where none was sent.
    expect([...reply.seq!]).toEqual([Number.NaN, Number.NaN, 7, Number.NaN]);
  });

  it('reports a thread that cannot load, and refuses chunks', async () => {
    const { thread, failures } = start(new URL('./test/decodeThreadLoadFails.ts', import.meta.url));
    await waitFor(() => failures.length > 0, 30_000, 'the failure');
    expect(String(failures[0])).toMatch(/failed to load/);
    expect(thread.ready).toBe(false);
    await expect(thread.decode([{ topic: 't', payload: '{}', tz: null }], NOW)).rejects.toThrow(/has failed/);
  });

  it('rejects the chunks a dying thread had, so the bridge decodes them itself', async () => {
    const { thread, failures } = start(new URL('./test/decodeThreadExits.ts', import.meta.url));
    await waitFor(() => thread.ready, 30_000, 'the decode thread');
    const chunk = thread.decode(
      [{ topic: 'kilowatch/meters/a4cf12b3c4d5/readings', payload: '{}', tz: null }],
      NOW,
    );
    await expect(chunk).rejects.toThrow(/exited \(code 3\)/);
    expect(failures).toHaveLength(1);
    expect(thread.ready).toBe(false);
  });
});
