/** Exports through `inject` on DuckDB: CSV that parses back to the stored values, a PDF that opens, a zip per device. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Reading } from '@kilowatch/core';
import { parseCsv } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const DAY0 = Date.parse('2026-03-28T23:00:00Z'); // local midnight of the spring DST day in Warsaw

/** Entry names of a zip, from its central directory. */
function zipEntries(buf: Buffer): string[] {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    expect(buf.readUInt32LE(at)).toBe(0x02014b50);
    const n = buf.readUInt16LE(at + 28);
    const extra = buf.readUInt16LE(at + 30);
    const comment = buf.readUInt16LE(at + 32);
    names.push(buf.subarray(at + 46, at + 46 + n).toString('utf8'));
    at += 46 + n + extra + comment;
  }
  return names;
}

describe('exports', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let dir: string;
  let alice: Account;
  let bob: Account;
  let meter: Meter;
  let second: Meter;

  beforeAll(async () => {
    store = await createDuckDbStore();
    dir = await mkdtemp(path.join(tmpdir(), 'kw-exports-'));
    t = await buildTestApp('pglite', { store, liveServices: { exports: { dir, pollMs: 60_000 } } });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    const loc = await locationOf(t.app, alice);
    meter = await claimMeter(t.app, alice, loc, '=HYPERLINK("http://x")');
    second = await claimMeter(t.app, alice, loc, 'Garage, north');
    const readings: Reading[] = [];
    for (let i = 0; i < 24 * 60; i++) {
      const ts = DAY0 + i * 60_000;
      readings.push({
        deviceKey: meter.deviceKey,
        ts,
        values: { vave1: 230 + (i % 7) / 10, eai1: 100 + i / 60, pave1: -12.5 },
      });
      readings.push({ deviceKey: second.deviceKey, ts, values: { vave1: 228, eai1: 5 + i / 120 } });
    }
    await store.write(readings);
    await store.refreshRollups(DAY0 + 2 * 86_400_000);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const range = { from: iso(DAY0), to: iso(DAY0 + 86_400_000) };

  async function exportAndDownload(who: Account, payload: Record<string, unknown>) {
    const res = await as(t.app, who, { method: 'POST', url: '/api/exports', payload });
    expect(res.statusCode, res.body).toBe(202);
    const { id } = res.json();
    await t.app.exports.idle();
    const job = (await as(t.app, who, { method: 'GET', url: `/api/exports/${id}` })).json();
    const file = await as(t.app, who, { method: 'POST', url: `/api/exports/${id}/download` });
    return { id, job, file };
  }

  it.each([
    [{}, ['Select file type to export.', 'Please select at least one parameter.', 'Date range is required.']],
    [{ deviceIds: [1], params: [], format: 'csv', ...range }, ['Please select at least one parameter.']],
    [{ deviceIds: [1], params: 'all', format: 'xls', ...range }, ['Select file type to export.']],
  ])('rejects %j with the SPEC messages', async (payload, messages) => {
    const res = await as(t.app, alice, { method: 'POST', url: '/api/exports', payload });
    expect(res.statusCode).toBe(400);
    const all = Object.values(res.json().errors as Record<string, string[]>).flat();
    for (const m of messages) expect(all).toContain(m);
  });

  it('refuses a range that is too long, and foreign devices', async () => {
    const long = await as(t.app, alice, {
      method: 'POST',
      url: '/api/exports',
      payload: {
        deviceIds: [meter.id],
        params: 'all',
        format: 'csv',
        from: '2020-01-01T00:00:00Z',
        to: '2026-01-01T00:00:00Z',
      },
    });
    expect(long.statusCode).toBe(400);
    expect(long.json().message).toBe('Data range is too long.');
    const foreign = await as(t.app, bob, {
      method: 'POST',
      url: '/api/exports',
      payload: { deviceIds: [meter.id], params: 'all', format: 'csv', ...range },
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('streams a CSV that parses back to the stored values, with UTC and local times and guarded text', async () => {
    const { id, job, file } = await exportAndDownload(alice, {
      deviceIds: [meter.id],
      params: 'all',
      format: 'csv',
      fileName: '../../März report.csv',
      ...range,
    });
    expect(job.status).toBe('done');
    expect(job.fileName).toBe('Marz_report.csv');
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toBe('attachment; filename="Marz_report.csv"');
    const rows = parseCsv(file.body);
    // Names with units for people, then the codes for scripts.
    expect(rows[0]).toEqual([
      'Time (UTC)',
      'Local time (Europe/Warsaw)',
      'Device',
      'Power L1 (W)',
      'Voltage L1 (V)',
      'Active energy import L1 (kWh)',
    ]);
    expect(rows[1]).toEqual([
      'timestamp_utc',
      'timestamp_local (Europe/Warsaw)',
      'device',
      'pave1',
      'vave1',
      'eai1',
    ]);
    const data = rows.slice(2);
    expect(data).toHaveLength(24 * 60);
    // The formula-looking device name is neutralised, and stays one cell.
    expect(data[0]![2]).toBe(`'=HYPERLINK("http://x")`);
    // 01:59 → 03:00 local across the spring change.
    expect(data[60]![0]).toBe('2026-03-29 00:00:00');
    expect(data[60]![1]).toBe('2026-03-29 01:00:00');
    expect(data[120]![1]).toBe('2026-03-29 03:00:00');
    const stored = await store.readRaw({
      deviceKey: meter.deviceKey,
      from: DAY0,
      to: DAY0 + 86_400_000,
      limit: 10_000,
    });
    stored.items.forEach((r, i) => {
      const row = data[i]!;
      expect(row[0]).toBe(new Date(r.ts).toISOString().slice(0, 19).replace('T', ' '));
      expect(Number(row[3])).toBe(r.values.pave1);
      expect(Number(row[4])).toBe(r.values.vave1);
      expect(Number(row[5])).toBe(r.values.eai1);
    });
    // Another user sees nothing of it.
    expect((await as(t.app, bob, { method: 'GET', url: `/api/exports/${id}` })).statusCode).toBe(404);
    expect((await as(t.app, bob, { method: 'POST', url: `/api/exports/${id}/download` })).statusCode).toBe(
      404,
    );
  });

  /** A PDF download checked to open (rendered by pdftoppm) and its text as pdftotext lays it out. */
  async function pdfText(pdf: Buffer): Promise<string | null> {
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const pdftoppm = ['/usr/bin/pdftoppm', '/usr/local/bin/pdftoppm'].find(existsSync);
    if (!pdftoppm && process.env.CI === 'true')
      throw new Error('pdftoppm missing: apt-get install -y poppler-utils');
    if (!pdftoppm) return null;
    const work = await mkdtemp(path.join(tmpdir(), 'kw-pdf-'));
    try {
      const file = path.join(work, 'r.pdf');
      await writeFile(file, pdf);
      execFileSync(pdftoppm, ['-png', '-r', '20', '-f', '1', '-l', '1', file, path.join(work, 'page')]);
      expect((await readdir(work)).some((f) => f.startsWith('page') && f.endsWith('.png'))).toBe(true);
      return execFileSync(path.join(path.dirname(pdftoppm), 'pdftotext'), ['-layout', file, '-'], {
        encoding: 'utf8',
      });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  it('writes a PDF report that opens and says what the meter did', async () => {
    const { job, file } = await exportAndDownload(alice, {
      deviceIds: [meter.id],
      params: 'all',
      format: 'pdf',
      ...range,
    });
    expect(job.status).toBe('done');
    expect(file.headers['content-type']).toBe('application/pdf');
    const text = await pdfText(file.rawPayload);
    if (text === null) return;
    // 1 kWh an hour over the 23-hour spring day and the first hour of the next, no export counter, the
    // charts' scales and periods, the phases' legend and the simulated-tariff label.
    for (const want of [
      'Imported: 23.98 kWh',
      /Exported: —\s*$/m,
      /Cheapest tariff group on this energy: G\w+, [\d.]+ PLN \(simulated\)/,
      'Energy imported per day (kWh)',
      /^\s*23\.0\s*$/m,
      /Mean voltage per phase \(V\)\s+L1\s+L2\s+L3/,
      /^\s*260\s*$/m,
      /^\s*230\s*$/m,
      /^\s*200\s*$/m,
      /2026-03-29\s+2026-03-30/,
      // The reading at the spring day's end closes it ((start, end]): 23 whole hours, then 59 minutes.
      /2026-03-29\s+23\.000\s+—\s+23\.000/,
      /2026-03-30\s+0\.983\s+—\s+0\.983/,
      'Tariff figures are simulated and are not a basis for claims.',
    ])
      if (typeof want === 'string') expect(text).toContain(want);
      else expect(text).toMatch(want);
  });

  it('writes a PDF report of the chosen parameters, per day, named with their units', async () => {
    const { job, file } = await exportAndDownload(alice, {
      deviceIds: [meter.id],
      params: ['vave1', 'pave1', 'eai1'],
      format: 'pdf',
      ...range,
    });
    expect(job.status).toBe('done');
    const text = await pdfText(file.rawPayload);
    if (text === null) return;
    for (const want of [
      // Voltage of the chosen phase only: 230.0 … 230.6 V, a mean of 230.3 V over the minutes of the day.
      /Mean voltage per phase \(V\)\s+L1\s*$/m,
      'Voltage L1 (V) per day',
      /Period\s+Mean\s+Min\s+Max/,
      /2026-03-29\s+230\.3\d\d\s+230\.000\s+230\.600/,
      'Power L1 (W) per day',
      /2026-03-29\s+-12\.500\s+-12\.500\s+-12\.500/,
      // A counter: its lowest and highest reading of the (23-hour) day and their difference.
      'Active energy import L1 (kWh) per day',
      /Period\s+Lowest\s+Highest\s+Highest - lowest/,
      /2026-03-29\s+100\.000\s+122\.983\s+22\.983/,
      /2026-03-30\s+123\.000\s+123\.983\s+0\.983/,
    ])
      if (typeof want === 'string') expect(text).toContain(want);
      else expect(text).toMatch(want);
    // What was not chosen is not there: no other phase, no list of every parameter.
    expect(text).not.toMatch(/\bL2\b/);
    expect(text).not.toContain('Parameters reported');
  });

  it('lists every reported parameter with its unit and range in a report of all parameters', async () => {
    const { file } = await exportAndDownload(alice, {
      deviceIds: [meter.id],
      params: 'all',
      format: 'pdf',
      ...range,
    });
    const text = await pdfText(file.rawPayload);
    if (text === null) return;
    expect(text).toContain('Parameters reported (lowest and highest in the period)');
    expect(text).toMatch(/Power L1 \(W\)\s+-12\.500\s+-12\.500/);
    expect(text).toMatch(/Voltage L1 \(V\)\s+230\.000\s+230\.600/);
    expect(text).toMatch(/Active energy import L1 \(kWh\)\s+100\.000\s+123\.983/);
    expect(text).not.toContain('pave1');
  });

  it('writes a PDF report of a meter without readings that says so, and prices nothing', async () => {
    const loc = await locationOf(t.app, alice);
    const silent = await claimMeter(t.app, alice, loc, 'Silent');
    const { job, file } = await exportAndDownload(alice, {
      deviceIds: [silent.id],
      params: 'all',
      format: 'pdf',
      ...range,
    });
    expect(job.status).toBe('done');
    const text = await pdfText(file.rawPayload);
    if (text === null) return;
    expect(text).toMatch(/Imported: —\s*$/m);
    expect(text).toContain('No energy readings in this period.');
    expect(text).toContain('No voltage readings in this period.');
    expect(text).not.toContain('Cheapest tariff');
    expect(text).not.toMatch(/^\s*230\s*$/m);
  });

  it('packs several devices into one zip with one file per device', async () => {
    const { job, file } = await exportAndDownload(alice, {
      deviceIds: [meter.id, second.id],
      params: ['vave1'],
      format: 'csv',
      ...range,
    });
    expect(job.fileName.endsWith('.zip')).toBe(true);
    expect(file.headers['content-type']).toBe('application/zip');
    const names = zipEntries(file.rawPayload);
    expect(names).toHaveLength(2);
    expect(names).toContain('Garage_north.csv');
  });

  it('answers 503 "Export unavailable" with Retry-After when the queue is full', async () => {
    const saved = t.app.exports.settings.maxQueued;
    t.app.exports.settings.maxQueued = 0;
    try {
      const res = await as(t.app, alice, {
        method: 'POST',
        url: '/api/exports',
        payload: { deviceIds: [meter.id], params: 'all', format: 'csv', ...range },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json().message).toBe('Export unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      t.app.exports.settings.maxQueued = saved;
    }
  });

  it('leaves a clear error and no file when writing fails', async () => {
    const saved = t.app.exports.settings.dir;
    const blocker = path.join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    t.app.exports.settings.dir = path.join(blocker, 'sub');
    try {
      const { job, file } = await exportAndDownload(alice, {
        deviceIds: [meter.id],
        params: 'all',
        format: 'csv',
        ...range,
      });
      expect(job.status).toBe('failed');
      expect(job.error).toBe('Exporting data failed.');
      expect(file.statusCode).toBe(404);
    } finally {
      t.app.exports.settings.dir = saved;
    }
    expect((await readdir(dir)).filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('answers 404, not a broken stream, when the file is not on this API replica', async () => {
    // Replicas that do not share the exports directory: the job is done, its file is elsewhere.
    const { id, job } = await exportAndDownload(alice, {
      deviceIds: [second.id],
      params: ['vave1'],
      format: 'csv',
      ...range,
    });
    expect(job.status).toBe('done');
    const [name] = (await readdir(dir)).filter((f) => f.startsWith(`${id}-`));
    await rm(path.join(dir, name!));
    const res = await as(t.app, alice, { method: 'POST', url: `/api/exports/${id}/download` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toHaveProperty('message');
  });

  it('expires finished files after the configured time', async () => {
    const { id, file } = await exportAndDownload(alice, {
      deviceIds: [second.id],
      params: 'all',
      format: 'csv',
      ...range,
    });
    expect(file.statusCode).toBe(200);
    expect(await t.app.exports.removeExpired(t.now() + t.app.exports.settings.ttlMs + 1)).toBeGreaterThan(0);
    expect((await as(t.app, alice, { method: 'POST', url: `/api/exports/${id}/download` })).statusCode).toBe(
      404,
    );
  });
});
