/**
 * History imports through `inject`, on DuckDB (in memory) and a real InfluxDB: round trip of Kilowatch's
 * own export, a Polish portal file, idempotency, conflicts kept or replaced, row errors, the size limit,
 * one import at a time, ownership and undo (of replacements too). Every stamp is a fixed past time; the
 * app's clock is fixed too.
 */
import { PassThrough } from 'node:stream';
import { type ImportJob, MESSAGES, type Reading } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, locationOf, steadyCounter } from '../analytics/testing.ts';
import { MAX_RUNS } from '../imports/runs.ts';
import { BATCH_READINGS, DEFAULT_MAX_BYTES, MAX_REPLACED, tooLargeMessage } from '../imports/service.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
/** 2026-01-10 00:00 in Warsaw (CET). */
const DAY1 = Date.parse('2026-01-09T23:00:00Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const pad = (n: number) => String(n).padStart(2, '0');

/** A Polish portal's hourly file: `Data;Godzina;Zużycie [kWh]`, decimal commas, stamped at each hour's end. */
function polishFile(date: string, kwh: readonly number[]): string {
  return `Data;Godzina;Zużycie [kWh]\r\n${kwh
    .map((e, i) => `${date};${pad(i + 1)}:00;${e.toFixed(3).replace('.', ',')}`)
    .join('\r\n')}\r\n`;
}
const POLISH_MAPPING = JSON.stringify({
  timestamp: { column: ['Data', 'Godzina'], format: 'YYYY-MM-DD HH:mm' },
  separator: ';',
  decimal: ',',
  stamp: 'end',
  interval: 60,
  values: [{ column: 'Zużycie [kWh]', param: 'eai1', kind: 'interval' }],
});
const KWH = Array.from({ length: 24 }, (_, i) => 0.1 + ((i * 37) % 100) / 100);

describe('import messages', () => {
  it("are core's catalogue texts, naming the server's bounds", () => {
    expect(MESSAGES.importTooManyRuns).toContain(` ${MAX_RUNS} runs`);
    expect(MESSAGES.importTooManyReplaced).toContain(` ${MAX_REPLACED} stored readings`);
    expect(DEFAULT_MAX_BYTES).toBe(256 * 1024 ** 2);
    expect(tooLargeMessage(DEFAULT_MAX_BYTES)).toBe(MESSAGES.importTooLarge);
    expect(tooLargeMessage(64 * 1024 ** 2)).toBe(
      'The file is larger than the import limit of 64 MiB (KW_IMPORT_MAX_BYTES).',
    );
  });
});

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`history imports on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let account: Account;
    let location: number;
    const now = Date.parse('2026-04-01T09:00:00Z');

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      t = await buildTestApp('pglite', { store, now: () => now });
      account = await signUp(t.app);
      location = await locationOf(t.app, account);
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    const meter = (name: string) => claimMeter(t.app, account, location, name);

    function post(deviceId: number, query: Record<string, string>, payload: unknown, type = 'text/csv') {
      return as(t.app, account, {
        method: 'POST',
        url: `/api/devices/${deviceId}/imports?${new URLSearchParams(query)}`,
        headers: { 'content-type': type },
        payload: payload as string,
      });
    }

    async function finished(id: number): Promise<ImportJob> {
      for (let i = 0; i < 500; i++) {
        const res = await as(t.app, account, { method: 'GET', url: `/api/imports/${id}` });
        expect(res.statusCode).toBe(200);
        const job = res.json() as ImportJob;
        if (job.state !== 'running' && job.state !== 'undoing') return job;
        await sleep(20);
      }
      throw new Error(`import ${id} did not finish`);
    }

    async function imported(deviceId: number, query: Record<string, string>, file: string) {
      const res = await post(deviceId, query, file);
      expect(res.statusCode, res.body).toBe(202);
      return finished((res.json() as { id: number }).id);
    }

    async function daily(deviceId: number, from: number, days: number): Promise<(number | null)[]> {
      await store.refreshRollups(now);
      const res = await as(t.app, account, {
        method: 'GET',
        url: `/api/devices/${deviceId}/energy?from=${new Date(from).toISOString()}&to=${new Date(from + days * 24 * H).toISOString()}&interval=1d`,
      });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { import: (number | null)[] }).import;
    }

    async function raw(deviceKey: string, from: number, to: number) {
      const out = [];
      for await (const page of store.streamRaw({ deviceKey, from, to })) out.push(...page);
      return out;
    }

    it('round trip: a device exported as Kilowatch CSV and imported into a new one has the same daily energy', async () => {
      const source = await meter('source');
      const readings: Reading[] = steadyCounter(source.deviceKey, 'eai1', DAY1, DAY1 + 3 * 24 * H, 1.25).map(
        (r, i) => ({ ...r, values: { ...r.values, vave1: 230 + (i % 5) / 10 } }),
      );
      await store.write(readings);
      await store.refreshRollups(now);
      const exp = await as(t.app, account, {
        method: 'POST',
        url: '/api/exports',
        payload: {
          deviceIds: [source.id],
          params: 'all',
          from: new Date(DAY1).toISOString(),
          to: new Date(DAY1 + 3 * 24 * H + 1).toISOString(),
          format: 'csv',
        },
      });
      expect(exp.statusCode, exp.body).toBe(202);
      const exportId = (exp.json() as { id: number }).id;
      for (let i = 0; i < 500; i++) {
        const s = await as(t.app, account, { method: 'GET', url: `/api/exports/${exportId}` });
        if ((s.json() as { status: string }).status === 'done') break;
        await sleep(20);
      }
      const file = await as(t.app, account, { method: 'POST', url: `/api/exports/${exportId}/download` });
      expect(file.statusCode).toBe(200);
      const target = await meter('target');
      const job = await imported(target.id, { format: 'kilowatch' }, file.body);
      expect(job).toMatchObject({
        state: 'done',
        deviceId: target.id,
        format: 'kilowatch',
        accepted: readings.length,
        duplicates: 0,
        rejected: 0,
        conflicts: 0,
        range: { from: DAY1, to: DAY1 + 3 * 24 * H },
        errors: [],
      });
      expect(job.bytesRead).toBe(Buffer.byteLength(file.body));
      const want = await daily(source.id, DAY1, 3);
      expect(want).toEqual([30, 30, 30]);
      expect(await daily(target.id, DAY1, 3)).toEqual(want);
      expect((await raw(target.deviceKey, DAY1, DAY1 + H)).map((r) => r.values)).toEqual(
        (await raw(source.deviceKey, DAY1, DAY1 + H)).map((r) => r.values),
      );
    });

    it('a Polish hourly kWh file (semicolons, decimal commas) gives its energies; the same file again changes nothing', async () => {
      const m = await meter('portal');
      const file = polishFile('2026-01-10', KWH);
      const first = await imported(
        m.id,
        { format: 'csv', mapping: POLISH_MAPPING, zone: 'Europe/Warsaw' },
        file,
      );
      // A reading at the first hour's start holding 0, then one at every hour's end.
      expect(first).toMatchObject({ state: 'done', rowsRead: 24, accepted: 25, duplicates: 0, rejected: 0 });
      const total = KWH.reduce((s, e) => s + Math.round(e * 1000), 0) / 1000;
      const [day] = await daily(m.id, DAY1, 1);
      expect(day).toBeCloseTo(total, 9);
      const second = await imported(
        m.id,
        { format: 'csv', mapping: POLISH_MAPPING, zone: 'Europe/Warsaw' },
        file,
      );
      expect(second).toMatchObject({ state: 'done', accepted: 0, duplicates: 25, conflicts: 0, rejected: 0 });
      expect((await daily(m.id, DAY1, 1))[0]).toBeCloseTo(total, 9);
      const list = await as(t.app, account, { method: 'GET', url: `/api/devices/${m.id}/imports` });
      expect((list.json() as ImportJob[]).map((j) => j.id)).toEqual([second.id, first.id]);
    });

    it('a stamp stored with another value is a conflict: reported with both values, the stored one kept', async () => {
      const m = await meter('conflict');
      const ts = DAY1 + 5 * H;
      await store.write([{ deviceKey: m.deviceKey, ts, values: { vave1: 231 } }]);
      const mapping = JSON.stringify({
        timestamp: { column: 'time', format: 'iso' },
        values: [{ column: 'v', param: 'vave1' }],
      });
      const file = `time,v\n${new Date(ts).toISOString()},229.5\n${new Date(ts + H).toISOString()},230\n`;
      const job = await imported(m.id, { format: 'csv', mapping }, file);
      expect(job).toMatchObject({ accepted: 1, conflicts: 1, duplicates: 0 });
      expect(job.conflictList).toEqual([{ line: 2, ts, param: 'vave1', stored: 231, file: 229.5 }]);
      expect(job.onConflict).toBe('keep');
      expect((await raw(m.deviceKey, ts, ts + 2 * H)).map((r) => r.values.vave1)).toEqual([231, 230]);
      const bad = await post(m.id, { format: 'csv', mapping, onConflict: 'overwrite' }, file);
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({
        message: MESSAGES.importOnConflict,
        errors: { onConflict: [MESSAGES.importOnConflict] },
      });
    });

    it('onConflict=replace: the file takes the stored times, other stored parameters stay; undo puts back exactly what was stored', async () => {
      const m = await meter('replace');
      const day = DAY1 + 20 * 24 * H; // 2026-01-30 in Warsaw
      // Stored: a register stepping 1 kWh an hour over the day (24 kWh), a current beside it at 05:00
      // and 06:00, a voltage at 05:00.
      const before: Reading[] = Array.from({ length: 25 }, (_, h) => ({
        deviceKey: m.deviceKey,
        ts: day + h * H,
        values: { eai1: 500 + h, ...(h === 5 ? { vave1: 231, iave1: 5 } : h === 6 ? { iave1: 6 } : {}) },
      }));
      await store.write(before);
      expect(await daily(m.id, day, 1)).toEqual([24]);
      const mapping = JSON.stringify({
        timestamp: { column: 'time', format: 'iso' },
        values: [
          { column: 'e', param: 'eai1' },
          { column: 'v', param: 'vave1' },
        ],
      });
      // The morning's register equal, the afternoon's 2 kWh an hour, another voltage at 05:00, one at
      // 06:00 where none was stored, and an hour after the day that is not stored at all.
      const rows: string[] = [];
      for (let h = 0; h <= 25; h++) {
        const e = h <= 12 ? 500 + h : 512 + (h - 12) * 2;
        const v = h === 5 ? '229.5' : h === 6 ? '230' : '';
        rows.push(`${new Date(day + h * H).toISOString()},${e},${v}`);
      }
      const file = `time,e,v\n${rows.join('\n')}\n`;
      const job = await imported(m.id, { format: 'csv', mapping, onConflict: 'replace' }, file);
      expect(job).toMatchObject({
        state: 'done',
        onConflict: 'replace',
        accepted: 1,
        duplicates: 11,
        conflicts: 14,
        rejected: 0,
        undoRefused: null,
      });
      expect(job.conflictList.slice(0, 3)).toEqual([
        // Line 1 is the header: hour h is on line h + 2.
        { line: 7, ts: day + 5 * H, param: 'vave1', stored: 231, file: 229.5 },
        { line: 8, ts: day + 6 * H, param: 'vave1', stored: null, file: 230 },
        { line: 15, ts: day + 13 * H, param: 'eai1', stored: 513, file: 514 },
      ]);
      expect(job.conflictList).toHaveLength(14);
      const replaced = await raw(m.deviceKey, day, day + 26 * H);
      expect(replaced.map((r) => r.ts)).toEqual([...before.map((r) => r.ts), day + 25 * H]);
      expect(replaced[5]!.values).toEqual({ eai1: 505, vave1: 229.5, iave1: 5 });
      expect(replaced[6]!.values).toEqual({ eai1: 506, vave1: 230, iave1: 6 });
      expect(replaced[24]!.values).toEqual({ eai1: 536 });
      // The rollups of the replaced range are refreshed as for the rest of the import.
      expect(await daily(m.id, day, 1)).toEqual([36]);
      // The same file again: every reading now equal.
      const again = await imported(m.id, { format: 'csv', mapping, onConflict: 'replace' }, file);
      expect(again).toMatchObject({ accepted: 0, duplicates: 26, conflicts: 0 });
      const nothing = await as(t.app, account, { method: 'DELETE', url: `/api/imports/${again.id}` });
      expect(nothing.statusCode).toBe(409);
      expect(nothing.json().message).toBe(MESSAGES.importNothingToUndo);
      const res = await as(t.app, account, { method: 'DELETE', url: `/api/imports/${job.id}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: job.id, state: 'undone' });
      const left = await raw(m.deviceKey, day - H, day + 27 * H);
      expect(left.map((r) => ({ ts: r.ts, values: r.values }))).toEqual(
        before.map((r) => ({ ts: r.ts, values: r.values })),
      );
      expect(await daily(m.id, day, 1)).toEqual([24]);
    });

    it('a replacing import that cannot be read on puts back what it replaced, and is failed', async () => {
      const m = await meter('replace-fail');
      const from = DAY1 + 24 * 24 * H;
      // More readings than a batch, so the first batch is replaced before the file turns out unreadable.
      const before: Reading[] = Array.from({ length: BATCH_READINGS + 10 }, (_, i) => ({
        deviceKey: m.deviceKey,
        ts: from + i * 60_000,
        values: { vave1: 230, iave1: 4 },
      }));
      await store.write(before);
      const stamp = (ts: number) => new Date(ts).toISOString().slice(0, 19).replace('T', ' ');
      const part = (device: string, rows: [number, number][]) =>
        [
          'Time (UTC),Local time (Europe/Warsaw),Device,Voltage L1 (V)',
          'timestamp_utc,timestamp_local (Europe/Warsaw),device,vave1',
          ...rows.map(([ts, v]) => `${stamp(ts)},${stamp(ts + H)},${device},${v}`),
        ]
          .map((l) => `${l}\r\n`)
          .join('');
      const body = new PassThrough();
      body.write(
        part(
          'Kitchen',
          before.map((r) => [r.ts, 231]),
        ),
      );
      const pending = as(t.app, account, {
        method: 'POST',
        url: `/api/devices/${m.id}/imports?format=kilowatch&onConflict=replace`,
        headers: { 'content-type': 'text/csv' },
        payload: body,
      });
      let replacedSoFar = false;
      for (let i = 0; i < 500 && !replacedSoFar; i++) {
        replacedSoFar = (await raw(m.deviceKey, from, from + 1))[0]?.values.vave1 === 231;
        if (!replacedSoFar) await sleep(20);
      }
      expect(replacedSoFar).toBe(true);
      // A second device's export follows, and none was chosen: the file cannot be imported.
      body.end(part('Garage', [[from, 1]]));
      // Answered 400 before the request's body has ended: inject may report that as an aborted request.
      const res = await pending.catch((e: unknown) => e);
      if (!(res instanceof Error)) expect((res as { statusCode: number }).statusCode).toBe(400);
      const list = await as(t.app, account, { method: 'GET', url: `/api/devices/${m.id}/imports` });
      // The handler may still be removing what it wrote when inject gives up on the request.
      const job = await finished((list.json() as ImportJob[])[0]!.id);
      expect(job).toMatchObject({ state: 'failed', onConflict: 'replace' });
      expect(job.failure).toMatch(/^The file cannot be imported: .*several devices/);
      const left = await raw(m.deviceKey, from - H, from + 5 * 24 * H);
      expect(left.map((r) => ({ ts: r.ts, values: r.values }))).toEqual(
        before.map((r) => ({ ts: r.ts, values: r.values })),
      );
    });

    it('onConflict=replace past the readings kept for undo: the import replaces them all and says it cannot be undone', async () => {
      const m = await meter('replace-many');
      const day = DAY1 + 22 * 24 * H;
      const before: Reading[] = Array.from({ length: 4 }, (_, h) => ({
        deviceKey: m.deviceKey,
        ts: day + h * H,
        values: { vave1: 230 + h },
      }));
      await store.write(before);
      const mapping = JSON.stringify({
        timestamp: { column: 'time', format: 'iso' },
        values: [{ column: 'v', param: 'vave1' }],
      });
      const file = `time,v\n${before.map((r) => `${new Date(r.ts).toISOString()},${r.values.vave1! + 0.5}`).join('\n')}\n`;
      const kept = t.app.imports.maxReplaced;
      t.app.imports.maxReplaced = 3;
      let job: ImportJob;
      try {
        job = await imported(m.id, { format: 'csv', mapping, onConflict: 'replace' }, file);
      } finally {
        t.app.imports.maxReplaced = kept;
      }
      expect(job).toMatchObject({
        state: 'done',
        conflicts: 4,
        accepted: 0,
        undoRefused: MESSAGES.importTooManyReplaced,
      });
      expect((await raw(m.deviceKey, day, day + 4 * H)).map((r) => r.values.vave1)).toEqual([
        230.5, 231.5, 232.5, 233.5,
      ]);
      const { rows } = await t.sql.query('select 1 from history_import_replaced where import_id = $1', [
        job.id,
      ]);
      expect(rows).toEqual([]);
      const res = await as(t.app, account, { method: 'DELETE', url: `/api/imports/${job.id}` });
      expect(res.statusCode).toBe(409);
      expect(res.json().message).toBe(MESSAGES.importTooManyReplaced);
    });

    it('a spring-gap stamp and a truncated last line are row errors; the other rows are stored', async () => {
      const m = await meter('errors');
      const mapping = JSON.stringify({
        timestamp: { column: 'Czas', format: 'DD.MM.YYYY HH:mm' },
        separator: ';',
        zone: 'Europe/Warsaw',
        values: [
          { column: 'U1', param: 'vave1' },
          { column: 'U2', param: 'vave2' },
        ],
      });
      const file =
        'Czas;U1;U2\n29.03.2026 01:30;230;231\n29.03.2026 02:30;231;232\n29.03.2026 03:30;232;233\n29.03.2026 03:45;23';
      const job = await imported(m.id, { format: 'csv', mapping }, file);
      expect(job).toMatchObject({ state: 'done', accepted: 2, rejected: 2 });
      expect(job.errors).toEqual([
        {
          line: 3,
          column: 'Czas',
          reason: '29.03.2026 02:30 does not exist in Europe/Warsaw: the clocks jump from 02:00 to 03:00',
        },
        {
          line: 5,
          column: 'U2',
          reason:
            'too few columns: 2, the mapping reads 3 (the last line ends without a line break: the file may be truncated)',
        },
      ]);
      const stored = await raw(
        m.deviceKey,
        Date.parse('2026-03-29T00:00:00Z'),
        Date.parse('2026-03-29T03:00:00Z'),
      );
      expect(stored.map((r) => new Date(r.ts).toISOString())).toEqual([
        '2026-03-29T00:30:00.000Z',
        '2026-03-29T01:30:00.000Z',
      ]);
      const csv = await as(t.app, account, { method: 'GET', url: `/api/imports/${job.id}/errors.csv` });
      expect(csv.statusCode).toBe(200);
      expect(csv.body.split('\r\n')[0]).toBe('line,column,reason');
      expect(csv.body.split('\r\n').filter(Boolean)).toHaveLength(3);
    });

    it('a 2 GB Content-Length is refused with 413 before the body is read', async () => {
      const m = await meter('huge');
      const body = new PassThrough();
      let read = false;
      body.on('data', () => {
        read = true;
      });
      const res = await as(t.app, account, {
        method: 'POST',
        url: `/api/devices/${m.id}/imports?format=kilowatch`,
        headers: { 'content-type': 'text/csv', 'content-length': String(2 * 1024 ** 3) },
        payload: body,
      });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({
        message: 'The file is larger than the import limit of 256 MiB (KW_IMPORT_MAX_BYTES).',
      });
      expect(read).toBe(false);
      body.destroy();
      const list = await as(t.app, account, { method: 'GET', url: `/api/devices/${m.id}/imports` });
      expect(list.json()).toEqual([]);
    });

    it('one import at a time per account: a second while one runs is refused with 409', async () => {
      const a = await meter('first');
      const b = await meter('second');
      const body = new PassThrough();
      const mapping = JSON.stringify({
        timestamp: { column: 'time', format: 'iso' },
        values: [{ column: 'v', param: 'vave1' }],
      });
      body.write('time,v\n2026-01-10T00:00:00Z,230\n');
      const pending = as(t.app, account, {
        method: 'POST',
        url: `/api/devices/${a.id}/imports?format=csv&mapping=${encodeURIComponent(mapping)}`,
        headers: { 'content-type': 'text/csv' },
        payload: body,
      });
      let running: ImportJob | undefined;
      for (let i = 0; i < 200 && !running; i++) {
        const list = await as(t.app, account, { method: 'GET', url: `/api/devices/${a.id}/imports` });
        running = (list.json() as ImportJob[])[0];
        if (!running) await sleep(10);
      }
      expect(running?.state).toBe('running');
      const second = await post(b.id, { format: 'csv', mapping }, 'time,v\n2026-01-10T00:00:00Z,230\n');
      expect(second.statusCode).toBe(409);
      expect(second.json().message).toBe(MESSAGES.importRunning);
      body.end('2026-01-10T00:01:00Z,231\n');
      const res = await pending;
      expect(res.statusCode).toBe(202);
      expect(await finished(running!.id)).toMatchObject({ state: 'done', accepted: 2 });
      // Once it is done, the next one is taken.
      const next = await post(b.id, { format: 'csv', mapping }, 'time,v\n2026-01-10T00:00:00Z,230\n');
      expect(next.statusCode).toBe(202);
      await finished((next.json() as { id: number }).id);
    });

    it("someone else's device and import answer 404", async () => {
      const m = await meter('mine');
      const job = await imported(
        m.id,
        { format: 'csv', mapping: POLISH_MAPPING },
        polishFile('2026-01-12', KWH),
      );
      const other = await signUp(t.app);
      const res = await as(t.app, other, {
        method: 'POST',
        url: `/api/devices/${m.id}/imports?format=kilowatch`,
        headers: { 'content-type': 'text/csv' },
        payload: 'x',
      });
      expect(res.statusCode).toBe(404);
      for (const url of [
        `/api/imports/${job.id}`,
        `/api/imports/${job.id}/errors.csv`,
        `/api/devices/${m.id}/imports`,
      ])
        expect((await as(t.app, other, { method: 'GET', url })).statusCode).toBe(404);
      expect((await as(t.app, other, { method: 'DELETE', url: `/api/imports/${job.id}` })).statusCode).toBe(
        404,
      );
    });

    it('undo removes exactly what the import added: a reading stored before stays, the daily energy is as it was', async () => {
      const m = await meter('undo');
      const day = DAY1 + 10 * 24 * H; // 2026-01-20 in Warsaw
      // Stored before: the first half of the day, a 1 kWh register step per hour, and a gauge at 12:40
      // (inside the afternoon the file adds, at a time the file does not have).
      const before: Reading[] = steadyCounter(m.deviceKey, 'eai1', day, day + 12 * H, 1, 500);
      before.push({ deviceKey: m.deviceKey, ts: day + 12 * H + 40 * 60_000, values: { vave1: 230 } });
      await store.write(before);
      const was = await daily(m.id, day, 1);
      expect(was).toEqual([12]);
      const mapping = JSON.stringify({
        timestamp: { column: 'time', format: 'iso' },
        values: [{ column: 'e', param: 'eai1' }],
      });
      // The file holds the same first half (equal) and the afternoon, every 15 minutes, 2 kWh an hour.
      const rows: string[] = [];
      for (let q = 0; q <= 96; q++) {
        const ts = day + q * 15 * 60_000;
        const e = q <= 48 ? 500 + q / 4 : 512 + ((q - 48) / 4) * 2;
        rows.push(`${new Date(ts).toISOString()},${e}`);
      }
      const job = await imported(m.id, { format: 'csv', mapping }, `time,e\n${rows.join('\n')}\n`);
      expect(job).toMatchObject({ state: 'done', accepted: 48, duplicates: 49, conflicts: 0 });
      expect(await daily(m.id, day, 1)).toEqual([36]);
      const res = await as(t.app, account, { method: 'DELETE', url: `/api/imports/${job.id}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: job.id, state: 'undone' });
      const left = await raw(m.deviceKey, day - H, day + 25 * H);
      expect(left.map((r) => r.ts)).toEqual(before.map((r) => r.ts));
      expect(left.at(-1)!.values).toEqual({ vave1: 230 });
      expect(await daily(m.id, day, 1)).toEqual(was);
      const again = await as(t.app, account, { method: 'DELETE', url: `/api/imports/${job.id}` });
      expect(again.statusCode).toBe(409);
      expect(again.json().message).toBe('This import has already been undone.');
    });
  });
}
