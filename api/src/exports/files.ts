/**
 * Export files: one CSV (raw readings streamed page by page) or one PDF report per device; several
 * devices are packed into one zip. Every file is written under a temporary name and renamed on success,
 * so a failure never leaves half a file behind.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { nextTurn, PARAM_NAMES } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type Archiver from 'archiver';
import type { DeviceContext, Range } from '../analytics/context.ts';
import { csvLine, localTimestampFormatter, numberCell, textCell } from './csv.ts';
import { writePdfReport } from './pdf.ts';

// archiver loads at the first zip, not at start-up.
const require = createRequire(import.meta.url);

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
  await write(csvLine(['timestamp_utc', `timestamp_local (${ctx.tz})`, 'device', ...columns]));
  const span = Math.max(1, range.to - range.from);
  if (columns.length > 0) {
    for await (const page of store.streamRaw({
      deviceKey: ctx.deviceKey,
      from: range.from,
      to: range.to,
      params: columns,
      pageSize: 5_000,
    })) {
      let chunk = '';
      let rows = 0;
      for (const row of page) {
        // A page is 5,000 rows of up to ~100 cells: the event loop gets a turn every 1,000.
        if (++rows % 1_000 === 0) {
          await write(chunk);
          chunk = '';
          await nextTurn();
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
      else await writePdfReport(store, d.ctx, range, tmp);
      done += (await stat(tmp)).size;
      space(done);
      step(1);
    }
    const staged = `${finalPath}.partial`;
    temps.push(staged);
    if (devices.length === 1) {
      await rename(temps[0]!, staged);
    } else {
      const out = createWriteStream(staged);
      const zip = (require('archiver') as typeof Archiver)('zip', { zlib: { level: 6 } });
      const closed = once(out, 'close');
      const failed = new Promise<never>((_, reject) => {
        zip.once('error', reject);
        out.once('error', reject);
      });
      failed.catch(() => {});
      zip.pipe(out);
      for (const [i, d] of devices.entries()) zip.file(tmpOf(i), { name: d.name });
      await Promise.race([zip.finalize(), failed]);
      await Promise.race([closed, failed]);
      // The device files and the zip made from them are on disk together until the former go.
      space(done + (await stat(staged)).size);
    }
    await rename(staged, finalPath);
    return (await stat(finalPath)).size;
  } finally {
    await Promise.all(temps.map((t) => rm(t, { force: true })));
  }
}
