/**
 * Export files: one CSV (raw readings streamed page by page) or one PDF report per device; several
 * devices are packed into one zip. Every file is written under a temporary name and renamed on success,
 * so a failure never leaves half a file behind.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { nextTurn, PARAM_NAMES } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { DeviceContext, Range } from '../analytics/context.ts';
import { csvLine, localTimestampFormatter, numberCell, textCell } from './csv.ts';
import { exportParamLabel } from './paramNames.ts';
import { writePdfReport } from './pdf.ts';

const require = createRequire(import.meta.url);

/** Longest the CSV writer holds the event loop before it gives other requests a turn (ms). */
const TURN_MS = 8;
/**
 * Readings per page of a CSV export. Each page's row objects live across the file's writes, long enough
 * to be promoted to V8's old generation: with 5,000 a year's export of every parameter of the three-phase
 * meter took the process to 930–948 MB at its peak beside a year's chart and heatmap, with 1,000 834–836
 * MB; the same export took 15–18 s instead of 12–14 s (bench/results/footprint.md).
 */
const EXPORT_PAGE_ROWS = 1_000;

/**
 * A worker's program that packs the device files into one zip. Loading archiver (~0.2 s of CPU) and
 * its CRC and stream work for tens of megabytes would otherwise hold the event loop for seconds.
 */
const ZIP_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createWriteStream } = require('node:fs');
const zip = require(workerData.library)('zip', { zlib: { level: 6 } });
const out = createWriteStream(workerData.path);
const fail = (err) => { throw err; };
zip.on('error', fail);
out.on('error', fail);
out.on('close', () => parentPort.postMessage('done'));
zip.pipe(out);
for (const f of workerData.files) zip.file(f.path, { name: f.name });
zip.finalize();
`;

/** Packs files into a zip at `path` in a worker thread; rejects when the worker fails. */
function zipInWorker(files: { path: string; name: string }[], path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(ZIP_WORKER, {
      eval: true,
      workerData: { library: require.resolve('archiver'), files, path },
    });
    worker.once('message', () => {
      resolve();
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`zip worker exited with ${code}`)));
  });
}

export type Progress = (done: number) => void;

/**
 * Told the bytes an export has written so far (all its files); throws to stop it, when the files would
 * take more than the space allowed for them.
 */
export type SpaceCheck = (bytes: number) => void;

/** The stored parameters to export: the asked ones in catalogue order, or every one the device reported. */
export async function exportColumns(
  store: TelemetryStore,
  deviceKey: string,
  params: readonly string[] | 'all',
) {
  if (params !== 'all') return PARAM_NAMES.filter((p) => params.includes(p));
  const latest = await store.latest(deviceKey);
  const reported = new Set(latest ? Object.keys(latest.values) : []);
  return PARAM_NAMES.filter((p) => reported.has(p));
}

/** Streams one device's raw readings as CSV with UTC and local timestamps. */
export async function writeCsv(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
  params: readonly string[] | 'all',
  path: string,
  progress: Progress,
  space: (bytes: number) => void = () => {},
): Promise<void> {
  const columns = await exportColumns(store, ctx.deviceKey, params);
  const out = createWriteStream(path);
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  failed.catch(() => {});
  const local = localTimestampFormatter(ctx.tz);
  const device = textCell(ctx.device.friendlyName || ctx.device.name);
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    space(bytes);
    if (!out.write(text)) await Promise.race([once(out, 'drain'), failed]);
  };
  // Two header rows: names with units for people, then the parameter codes for scripts (docs/api.md §Exports).
  await write(
    csvLine([
      'Time (UTC)',
      textCell(`Local time (${ctx.tz})`),
      'Device',
      ...columns.map((c) => textCell(exportParamLabel(c))),
    ]),
  );
  await write(csvLine(['timestamp_utc', `timestamp_local (${ctx.tz})`, 'device', ...columns]));
  const span = Math.max(1, range.to - range.from);
  if (columns.length > 0) {
    for await (const page of store.streamRaw({
      deviceKey: ctx.deviceKey,
      from: range.from,
      to: range.to,
      params: columns,
      pageSize: EXPORT_PAGE_ROWS,
    })) {
      let chunk = '';
      let rows = 0;
      let turn = performance.now();
      for (const row of page) {
        // A page is 1,000 rows of up to ~100 cells: the event loop gets a turn every ~8 ms of them.
        if (++rows % 100 === 0 && performance.now() - turn > TURN_MS) {
          await write(chunk);
          chunk = '';
          await nextTurn();
          turn = performance.now();
        }
        const iso = new Date(row.ts).toISOString();
        chunk += csvLine([
          `${iso.slice(0, 10)} ${iso.slice(11, 19)}`,
          local(row.ts),
          device,
          ...columns.map((c) => numberCell(row.values[c])),
        ]);
      }
      await write(chunk);
      const last = page[page.length - 1];
      if (last) progress((last.ts - range.from) / span);
    }
  }
  out.end();
  await Promise.race([once(out, 'finish'), failed]);
}

export interface DeviceFile {
  ctx: DeviceContext;
  /** Name inside the zip. */
  name: string;
}

/**
 * Writes the export to `finalPath`: a single file, or a zip of one file per device. Temporary files are
 * removed whatever happens. `space` is told the bytes on disk as they grow and may stop the export.
 */
export async function writeExport(
  store: TelemetryStore,
  devices: readonly DeviceFile[],
  format: 'csv' | 'pdf',
  range: Range,
  params: readonly string[] | 'all',
  finalPath: string,
  progress: Progress,
  space: SpaceCheck = () => {},
): Promise<number> {
  const temps: string[] = [];
  const tmpOf = (i: number) => `${finalPath}.part${i}`;
  try {
    /** Bytes of the device files finished so far. */
    let done = 0;
    for (const [i, d] of devices.entries()) {
      const tmp = tmpOf(i);
      temps.push(tmp);
      const step = (x: number) => progress((i + Math.min(1, Math.max(0, x))) / devices.length);
      if (format === 'csv') await writeCsv(store, d.ctx, range, params, tmp, step, (b) => space(done + b));
      else
        await writePdfReport(
          store,
          d.ctx,
          range,
          tmp,
          await exportColumns(store, d.ctx.deviceKey, params),
          params === 'all',
        );
      done += (await stat(tmp)).size;
      space(done);
      step(1);
    }
    const staged = `${finalPath}.partial`;
    temps.push(staged);
    if (devices.length === 1) {
      await rename(temps[0]!, staged);
    } else {
      await zipInWorker(
        devices.map((d, i) => ({ path: tmpOf(i), name: d.name })),
        staged,
      );
      // The device files and the zip made from them are on disk together until the former go.
      space(done + (await stat(staged)).size);
    }
    await rename(staged, finalPath);
    return (await stat(finalPath)).size;
  } finally {
    await Promise.all(temps.map((t) => rm(t, { force: true })));
  }
}
